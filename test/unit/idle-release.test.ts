/**
 * When a client hands its handle's memory back (lib/netlink/client.ts):
 * once its caller is idle, at the event loop's next turn, not after every
 * call. Calls made back to back (a loop of dumps, queued callers) keep the
 * memory a big call paged in; the release comes once, after the last. An
 * Ipvs over a stub of the addon's handle that counts the releases (the
 * memory itself: test/kernel/ipset-idle-buffers.test.ts).
 */
import t from 'tap';

import { stubIpvs } from '../support/ipvs-stub.js';

/** A stub whose calls end on a later turn of the event loop, as the addon's do (a worker thread's completion). */
function counted() {
  const released = { replies: 0, buffers: 0 };
  const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 1));
  const ipvs = stubIpvs({
    execute: () => later({ failures: [], records: new ArrayBuffer(0), strings: [] }),
    dump: () => later({ failures: [], records: new ArrayBuffer(0), strings: [] }),
    releaseReplies: () => (released.replies++, 0),
    releaseBuffers: () => (released.buffers++, 0),
  });
  return { ipvs, released };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const service = { protocol: 'tcp', address: '10.0.0.1', port: 80 } as const;

t.test('one call: released once, at the next turn of the event loop', async (t) => {
  const { ipvs, released } = counted();
  await ipvs.dump();
  t.same(released, { replies: 0, buffers: 0 }, 'not while the caller goes on from the call');
  await turn();
  t.same(released, { replies: 1, buffers: 1 }, 'the reply records and the socket\'s buffers, once idle');
  await turn();
  t.same(released, { replies: 1, buffers: 1 }, 'and not again');
});

t.test('calls back to back: one release, after the last', async (t) => {
  const { ipvs, released } = counted();
  for (let i = 0; i < 5; i++) await ipvs.dump();
  await Promise.all([ipvs.dump(), ipvs.addService(service), ipvs.dump()]);
  t.same(released, { replies: 0, buffers: 0 }, 'none between calls made at once, awaited or queued');
  await turn();
  t.same(released, { replies: 1, buffers: 1 }, 'one, once idle');
});

t.test('a call that fails still ends in a release; a closed handle is not touched', async (t) => {
  let buffers = 0;
  const ipvs = stubIpvs({
    execute: async () => {
      throw Object.assign(new Error('sendmsg: ENOBUFS'), { errno: 105, code: 'ENOBUFS' });
    },
    releaseBuffers: () => (buffers++, 0),
  });
  await t.rejects(ipvs.addService(service));
  await turn();
  t.equal(buffers, 1, 'released after the failure');
  await ipvs.dump();
  ipvs.close();
  await turn();
  t.equal(buffers, 1, 'not after close()');
});
