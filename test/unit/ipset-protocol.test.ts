// Protocol negotiation (native/ipset/session.cc) against scripted kernels
// built from the reply a real 6.1 kernel gave `ipset -v`
// (test/fixtures/ipset-6.1/version.json): protocol 7 with minimum 6, an
// older kernel that refuses 7 and speaks only 6, a newer one, one too old,
// and one without ipset.
import t from 'tap';

import { native } from '../../lib/netlink/binding.js';
import { loadFixture } from '../support/fixtures.js';

interface Negotiated {
  errno: number;
  where: string;
  message: string;
  version: number;
  min: number;
  kernel: number;
  requests: Buffer[];
}
type Answer = { error?: number; reply?: Buffer };
const negotiate = (answer: (request: Buffer) => Answer) =>
  (native.ipsetNegotiate as (a: (r: Buffer) => Answer) => Negotiated)(answer);

const c = native.ipsetConstants;
const IPSET_ATTR_PROTOCOL = 1;
const IPSET_ATTR_PROTOCOL_MIN = 10;

/** The real kernel's PROTOCOL reply, with its version (and minimum) replaced. */
function reply(version: number, min?: number): Buffer {
  const real = Buffer.from(loadFixture('ipset-6.1', 'version').received[0], 'hex');
  // nlmsghdr(16) nfgenmsg(4), then PROTOCOL (len 5, padded to 8), then PROTOCOL_MIN.
  t.equal(real.readUInt16LE(22), IPSET_ATTR_PROTOCOL, 'fixture: PROTOCOL first');
  t.equal(real.readUInt16LE(30), IPSET_ATTR_PROTOCOL_MIN, 'fixture: PROTOCOL_MIN second');
  const b = Buffer.from(real.subarray(0, min === undefined ? 28 : 36));
  b.writeUInt32LE(b.length, 0);
  b[24] = version;
  if (min !== undefined) b[32] = min;
  return b;
}

/** The protocol version a request carries (its command-level IPSET_ATTR_PROTOCOL). */
const protocolOf = (request: Buffer) => {
  t.equal(request.readUInt16LE(22), IPSET_ATTR_PROTOCOL);
  return request[24];
};

t.test('a protocol 7 kernel: version 7, its minimum 6, one request', async (t) => {
  const r = negotiate(() => ({ reply: reply(7, 6) }));
  t.match(r, { errno: 0, version: 7, min: 6, kernel: 7 });
  t.same(r.requests.map(protocolOf), [7]);
  t.same(r.requests[0], native.ipsetEncode({ cmd: 'protocol' })[0], 'the request ipset -v sends');
});

t.test('a kernel that speaks only protocol 6: it refuses 7, we fall back to 6', async (t) => {
  const r = negotiate((request) => (protocolOf(request) === 7 ? { error: c.IPSET_ERR_PROTOCOL } : { reply: reply(6) }));
  t.match(r, { errno: 0, version: 6, kernel: 6, min: 0 });
  t.same(r.requests.map(protocolOf), [7, 6], 'asked with 7, then with IPSET_PROTOCOL_MIN');
  t.equal(c.IPSET_PROTOCOL_MIN, 6);
});

t.test('a newer kernel: we speak our own 7', async (t) => {
  t.match(negotiate(() => ({ reply: reply(8, 6) })), { errno: 0, version: 7, kernel: 8, min: 6 });
});

t.test('a kernel older than protocol 6: refused with a clear error', async (t) => {
  const r = negotiate(() => ({ reply: reply(5) }));
  t.match(r, { errno: 93, where: 'IPSET_CMD_PROTOCOL', message: 'the kernel speaks ipset protocol 5; at least 6 is needed' });
});

t.test('no ipset in the kernel: says to load the module', async (t) => {
  for (const error of [93 /* EPROTONOSUPPORT */, 2 /* ENOENT */])
    t.match(negotiate(() => ({ error })), { errno: 93, message: /this kernel has no ipset: load the ip_set module/ });
});

t.test('a reply without a version is malformed', async (t) => {
  t.match(negotiate(() => ({})), { errno: 74, message: /no protocol version/ });
});
