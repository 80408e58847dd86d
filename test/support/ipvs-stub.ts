/**
 * An Ipvs over a stub of the addon's handle (lib/netlink/binding.ts,
 * NativeIpvsHandle): no kernel, no socket. Every batch and dump answers
 * "all done, nothing read" unless the test passes its own `execute` or
 * `dump`, which see what the client hands the addon (or its own releases,
 * to see when the client makes them).
 */
import { Ipvs } from '../../lib/index.js';
import type { NativeIpvsHandle, NativeIpvsReplies } from '../../lib/netlink/binding.js';

const nothing = (): NativeIpvsReplies => ({ failures: [], records: new ArrayBuffer(0), strings: [] });

export function stubIpvs(answers: Partial<Pick<NativeIpvsHandle, 'execute' | 'dump' | 'releaseReplies' | 'releaseBuffers'>> = {}): Ipvs {
  const stub: NativeIpvsHandle = {
    open: async () => 0,
    execute: answers.execute ?? (async () => nothing()),
    dump: answers.dump ?? (async () => nothing()),
    releaseReplies: answers.releaseReplies ?? (() => 0),
    releaseBuffers: answers.releaseBuffers ?? (() => 0),
    testBufferResidency: () => 0,
    close() {},
    counters: () => ({ sendmsgCalls: 0, recvCalls: 0, messagesSent: 0, messagesReceived: 0, dumpsRestarted: 0 }),
    familyId: () => 0,
  };
  // The constructor is private to TypeScript only; open() would open a socket.
  return new (Ipvs as unknown as new (h: NativeIpvsHandle) => Ipvs)(stub);
}
