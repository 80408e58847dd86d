/**
 * How the informer ends a watch by what ended it, against a scripted
 * watcher: a 410 Gone (an HTTP status or an ERROR event's Status) asks the
 * owner for a relist, or relists at once without an owner's `expired`
 * handler; an ERROR event of another code is a failure, as client-go's
 * reflector takes it; a stream the server closes resumes from the last
 * resourceVersion without a list.
 */
import t from 'tap';
import type { KubernetesObject } from '@kubernetes/client-node/dist/types.js';
import { Informer, type InformerHandlers, type Watcher } from '../../lib/proxy/sources/informer.js';

/** Each watch plays the next script: its events, then how it ends ('never': it stays open). */
type Script = { events: Array<[string, unknown]>; end: unknown };

function informer(scripts: Script[], handlers: Partial<InformerHandlers> = {}) {
  const calls: string[] = [];
  const watch: Watcher = {
    async watch(_path, query, event, done) {
      calls.push(`watch from ${String(query.resourceVersion)}`);
      const script = scripts.shift();
      if (script) {
        queueMicrotask(() => {
          for (const [type, object] of script.events) event(type, object);
          if (script.end !== 'never') done(script.end);
        });
      }
      return new AbortController();
    },
  };
  const errors: unknown[] = [];
  let expired = 0;
  const i = new Informer({
    path: '/api/v1/services',
    list: async () => {
      calls.push('list');
      return { metadata: { resourceVersion: '10' }, items: [] } as never;
    },
    watch,
    handlers: { add: () => {}, update: () => {}, delete: () => {}, error: (e) => void errors.push(e), expired: () => void expired++, ...handlers },
  });
  return { i, calls, errors, expired: () => expired };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
const svc = (rv: string): KubernetesObject => ({ metadata: { name: 'web', namespace: 'default', resourceVersion: rv } });

t.test('a closed stream resumes from the last resourceVersion, without a list', async (t) => {
  const { i, calls, errors, expired } = informer([{ events: [['ADDED', svc('11')]], end: null }]);
  await i.start();
  await settle();
  t.same(calls, ['list', 'watch from 10', 'watch from 11']);
  t.same([errors.length, expired()], [0, 0]);
});

t.test('a 410, as an ERROR event or as a status, goes to the owner for a relist', async (t) => {
  for (const end of [
    { events: [['ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' }]], end: null },
    { events: [], end: Object.assign(new Error('too old resource version'), { statusCode: 410 }) },
  ] as Script[]) {
    const { i, calls, errors, expired } = informer([end]);
    await i.start();
    await settle();
    t.same(calls, ['list', 'watch from 10'], 'no relist of its own');
    t.same([errors.length, expired()], [0, 1], 'the owner asked');
    t.equal(i.latestResourceVersion(), '', 'the next start lists');
  }
});

t.test('without an expired handler, a 410 relists at once', async (t) => {
  const { i, calls } = informer([{ events: [['ERROR', { kind: 'Status', code: 410 }]], end: null }], { expired: undefined });
  await i.start();
  await settle();
  t.same(calls.slice(0, 3), ['list', 'watch from 10', 'list']);
});

t.test('an ERROR event of another code is a failure with its Status, not a 410', async (t) => {
  const { i, calls, errors, expired } = informer([{ events: [['ERROR', { kind: 'Status', code: 500, message: 'etcdserver: request timed out' }]], end: null }]);
  await i.start();
  await settle();
  t.same(calls, ['list', 'watch from 10'], 'the owner restarts it');
  t.equal(expired(), 0);
  t.match(errors, [{ message: 'etcdserver: request timed out', statusCode: 500 }]);
});

t.test("a start after an ERROR whose watch never ended: the new watch's plain end is no failure", async (t) => {
  const { i, calls, errors, expired } = informer([
    { events: [['ERROR', { kind: 'Status', code: 500 }]], end: 'never' },
    { events: [['ADDED', svc('12')]], end: null },
  ]);
  await i.start();
  await settle();
  await i.start();
  await settle();
  t.same(calls.slice(0, 5), ['list', 'watch from 10', 'list', 'watch from 10', 'watch from 12'], 'the new round lists, watches, and resumes when its watch closes');
  t.same([errors.length, expired()], [0, 0]);
});
