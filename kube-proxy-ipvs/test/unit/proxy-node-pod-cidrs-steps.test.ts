/**
 * The NodeCIDR steps of kube-proxy's NodeManager: a change of the Node's
 * pod CIDRs from those of the start ends the process (exit 1) after
 * upstream's log line; the start's wait for them looks each second for up
 * to 5 minutes and then fails with upstream's error.
 */
import { pino } from 'pino';
import t from 'tap';
import type { Node } from '../../lib/kubernetes/model.js';
import { exitIfPodCIDRsChanged, POD_CIDRS_WAIT_MS, waitForPodCIDRs } from '../../lib/proxy/node-pod-cidrs.js';
import { FakeClock, settle } from '../support/fake-clock.js';

const node = (podCIDRs?: string[]): Node => ({ metadata: { name: 'node-a' }, ...(podCIDRs ? { spec: { podCIDRs } } : {}) });

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  return { lines, logger };
}

t.test('a change of the ranges ends the process, with upstream\'s line; the same ranges do not', async (t) => {
  const { lines, logger } = capture();
  const codes: number[] = [];
  exitIfPodCIDRsChanged(['10.244.1.0/24'], node(['10.244.1.0/24']), logger, (c) => codes.push(c));
  t.same(codes, [], 'unchanged');
  exitIfPodCIDRsChanged(['10.244.1.0/24', 'fd00:1::/64'], node(['fd00:1::/64', '10.244.1.0/24']), logger, (c) => codes.push(c));
  t.same(codes, [1], 'another order is a change (reflect.DeepEqual)');
  exitIfPodCIDRsChanged([], node(['10.244.1.0/24']), logger, (c) => codes.push(c));
  t.same(codes, [1, 1], 'ranges where there were none');
  t.match(lines.at(-1), { level: 30, msg: 'PodCIDRs changed for the node', node: 'node-a', newPodCIDRs: ['10.244.1.0/24'], oldPodCIDRs: [] });
});

t.test("the start's wait: each second, up to 5 minutes, then upstream's error", async (t) => {
  const clock = new FakeClock();
  let current: Node | undefined = node();
  let done = false;
  const waiting = waitForPodCIDRs(() => current, 'node-a', clock).then(() => void (done = true));
  await clock.advance(60_000);
  t.notOk(done, 'no ranges yet: still waiting');
  current = node(['10.244.1.0/24']);
  await clock.advance(1000);
  await waiting;
  t.ok(done, 'the ranges, seen at the next look');

  for (const [who, message] of [
    [node(), 'timeout waiting for PodCIDR allocation on node "node-a"'],
    [undefined, 'timeout waiting for node "node-a" to exist'],
  ] as const) {
    let error: unknown;
    const failing = waitForPodCIDRs(() => who, 'node-a', clock).catch((e: unknown) => void (error = e));
    await clock.advance(POD_CIDRS_WAIT_MS - 1000);
    t.equal(error, undefined, 'still waiting just before the 5 minutes');
    await clock.advance(1000);
    await failing;
    t.match(error, { message }, message);
  }

  let stopped = false;
  const ended = waitForPodCIDRs(() => node(), 'node-a', clock, () => stopped);
  stopped = true;
  await clock.advance(1000);
  await settle();
  await t.resolves(ended, 'a stop ends the wait quietly');
});
