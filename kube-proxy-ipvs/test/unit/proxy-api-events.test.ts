/**
 * The node's events, posted to a fake API server as kube-proxy's recorder
 * posts them: the Event's shape (client-go's makeEvent), the REST client
 * metrics counting the POST, and client-go's broadcaster's retries: no
 * answer tried again, an error status given up at once (client-go's
 * StatusError), each failure logged in its words; close() ends the retries.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import t from 'tap';
import { ApiEvents, eventObject } from '../../lib/proxy/sources/api-events.js';
import { loadKubeConfig } from '../../lib/proxy/sources/kubeconfig.js';
import { Registry } from '../../lib/proxy/prom-client-parts.js';
import { registerRestClientMetrics } from '../../lib/proxy/rest-client-metrics.js';
import { FakeApiServer } from '../support/fake-apiserver.js';

async function fake(t: { teardown(fn: () => unknown): void }) {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.close());
  const lines: Array<{ msg: string; err?: string }> = [];
  const log = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  return { api, lines, events: new ApiEvents(loadKubeConfig({ master: api.url }), 'node-a', log, 20, 'host-1') };
}

const until = async (what: string, fn: () => boolean | Promise<boolean>) => {
  const end = Date.now() + 5000;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
};

t.test("the birth cry: an events.k8s.io/v1 Event on the Node, as client-go's recorder makes it", async (t) => {
  const { api, events } = await fake(t);
  events.record({ type: 'Normal', reason: 'Starting', action: 'StartKubeProxy' });
  await until('the post', () => api.events.length === 1);
  const { path, event } = api.events[0];
  t.equal(path, '/apis/events.k8s.io/v1/namespaces/default/events', 'a Node has no namespace: default');
  t.match(event, {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: /^node-a\.[0-9a-f]{16}$/, namespace: 'default' },
    eventTime: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/,
    reportingController: 'kube-proxy',
    reportingInstance: 'kube-proxy-host-1',
    action: 'StartKubeProxy',
    reason: 'Starting',
    regarding: { kind: 'Node', name: 'node-a', uid: 'node-a' },
    type: 'Normal',
  });
  t.notOk('note' in event, 'an empty note is left out, as omitempty leaves it');
  const registry = new Registry();
  registerRestClientMetrics(registry);
  // The server has the event before the client has read the answer, which is when it counts.
  const counted = /rest_client_requests_total\{code="201",host="127\.0\.0\.1:\d+",method="POST"\} 1/;
  let metrics = '';
  await until('the answer counted', async () => counted.test((metrics = await registry.metrics())));
  t.match(metrics, counted, 'counted by the REST client metrics as a POST');
});

t.test('the name is the node and the time in nanoseconds, hex; eventTime has microseconds', async (t) => {
  const at = new Date('2026-12-01T00:50:44.123Z');
  const e = eventObject({ type: 'Warning', reason: 'R', action: 'A', note: 'n' }, 'n1', 'kube-proxy-h', at);
  t.equal((e.metadata as { name: string }).name, `n1.${(1796086244123n * 1000000n).toString(16)}`);
  t.equal(e.eventTime, '2026-12-01T00:50:44.123000Z');
  t.equal(e.note, 'n');
});

t.test("an error status is given up at once; no answer is tried again; each failure in client-go's words", async (t) => {
  const { api, events, lines } = await fake(t);
  for (const code of [403, 500]) {
    lines.length = 0;
    api.eventAnswers = [code];
    const before = api.count('post events');
    events.record({ type: 'Normal', reason: 'Starting', action: 'StartKubeProxy' });
    await until(`the ${code}`, () => lines.length === 1);
    await sleep(100);
    t.equal(api.count('post events'), before + 1, `${code}: not tried again`);
    t.match(lines, [{ msg: 'Server rejected event (will not retry!)', err: `the fake apiserver answers ${code}` }]);
  }

  // No server at the address: held on to and tried again until close().
  await api.close();
  lines.length = 0;
  events.record({ type: 'Normal', reason: 'Starting', action: 'StartKubeProxy' });
  await until('two unanswered tries', () => lines.length >= 2);
  t.ok(lines.every((l) => l.msg === 'Unable to write event (may retry after sleeping)'), 'each unanswered try logged');
  events.close();
  const tries = lines.length;
  await sleep(100);
  t.equal(lines.length, tries, 'close() ends the retries');
});
