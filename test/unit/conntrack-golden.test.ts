// The bytes we send, compared with the bytes the `conntrack` tool sent
// for the same request (test/fixtures/conntrack and conntrack-6.1,
// captured with strace; see test/fixtures/README.md). Only nlmsg_seq and
// nlmsg_pid are ignored, plus:
//  - NLM_F_ACK on dumps and on IPCTNL_MSG_CT_GET_STATS: our socket asks
//    every request for an answer (one result per request); the tool does
//    not ask these;
//  - a family flush (`conntrack -F -f ipv6`): the tool sends version 0,
//    which makes the kernel empty the whole table; ours says version 1
//    so only that family goes (the one byte that differs);
//  - a delete: the tool sends back everything its dump read (reply tuple,
//    status, timeout, mark, ...), of which the kernel reads only the
//    tuple; ours carries the tuple alone, and it must be the tool's, byte
//    for byte. (NLM_F_NONREC 0x100, which libnetfilter_conntrack sets on
//    deletes and the kernel does not read, is masked too.)
import t from 'tap';

import { native } from '../../lib/netlink/binding.js';
import * as validate from '../../lib/conntrack/validate.js';
import { loadFixture, messages, withoutSeqPid } from '../support/fixtures.js';

const NLM_F_ACK = 0x4;
const NLM_F_NONREC = 0x100;
const encode = native.conntrackEncode as (op: object) => Buffer;

function hex(b: Buffer, clearFlags = 0): string {
  const c = withoutSeqPid(b);
  c.writeUInt16LE(c.readUInt16LE(6) & ~clearFlags, 6);
  return c.toString('hex');
}

/** The attributes after nlmsghdr + nfgenmsg, by type (nested flag dropped). */
function attrs(b: Buffer): Map<number, string> {
  const out = new Map<number, string>();
  for (let at = 20; at + 4 <= b.readUInt32LE(0); ) {
    const len = b.readUInt16LE(at);
    out.set(b.readUInt16LE(at + 2) & 0x3fff, b.subarray(at, at + len).toString('hex'));
    at += (len + 3) & ~3;
  }
  return out;
}

const udpKey = { protocol: 'udp', orig: { src: '10.0.0.1', dst: '10.0.0.2', srcPort: 1234, dstPort: 53 } };

// fixture -> what our encoder is asked for the same request, and the
// flags the comparison ignores.
const cases: Record<string, { op: object; ignore?: number }> = {
  'list-empty': { op: { op: 'dump', filter: validate.filter(undefined) }, ignore: NLM_F_ACK },
  'list-all': { op: { op: 'dump', filter: validate.filter({}) }, ignore: NLM_F_ACK },
  'list-inet': { op: { op: 'dump', filter: validate.filter({ family: 'inet' }) }, ignore: NLM_F_ACK },
  'list-inet6': { op: { op: 'dump', filter: validate.filter({ family: 'inet6' }) }, ignore: NLM_F_ACK },
  'list-mark': { op: { op: 'dump', filter: validate.filter({ mark: 7 }) }, ignore: NLM_F_ACK },
  'list-mark-mask': { op: { op: 'dump', filter: validate.filter({ mark: { value: 7, mask: 0xf } }) }, ignore: NLM_F_ACK },
  'list-status': { op: { op: 'dump', filter: validate.filter({ status: ['ASSURED'] }) }, ignore: NLM_F_ACK },
  'get-udp': { op: { op: 'get', key: validate.key(udpKey) } },
  'get-missing': { op: { op: 'get', key: validate.key({ protocol: 'udp', orig: { src: '10.0.0.1', dst: '10.0.0.2', srcPort: 1, dstPort: 2 } }) } },
  'get-icmp': { op: { op: 'get', key: validate.key({ protocol: 'icmp', orig: { src: '10.0.0.1', dst: '10.0.0.2', icmpType: 8, icmpCode: 0, icmpId: 77 } }) } },
  'get-ipv6': { op: { op: 'get', key: validate.key({ protocol: 'udp', orig: { src: 'fd00::1', dst: 'fd00::2', srcPort: 1, dstPort: 2 } }) } },
  flush: { op: { op: 'flush', family: validate.flushFamily(undefined) } },
  'stats-cpu': { op: { op: 'statsCpu' }, ignore: NLM_F_ACK },
  count: { op: { op: 'stats' }, ignore: NLM_F_ACK },
};

for (const folder of ['conntrack', 'conntrack-6.1']) {
  t.test(folder, async (t) => {
    for (const [name, c] of Object.entries(cases)) {
      const fx = loadFixture(folder, name);
      const sent = messages(fx.sent);
      t.equal(sent.length, 1, `${name}: the tool sent one request`);
      t.equal(hex(encode(c.op), c.ignore), hex(sent[0].bytes, c.ignore), `${name}: ${fx.command}`);
    }

    const flush6 = messages(loadFixture(folder, 'flush-inet6').sent)[0].bytes;
    const ours6 = encode({ op: 'flush', family: validate.flushFamily('inet6') });
    t.equal(ours6[17], 1, 'a family flush says version 1');
    t.equal(flush6[17], 0, 'the tool says version 0 (and the kernel then flushes every family)');
    ours6[17] = 0;
    t.equal(hex(ours6), hex(flush6), 'flush-inet6: otherwise the same bytes');

    const del = loadFixture(folder, 'delete-udp');
    const [dump, tool] = messages(del.sent);
    t.equal(hex(encode({ op: 'dump', filter: validate.filter({ family: 'inet' }) }), NLM_F_ACK), hex(dump.bytes, NLM_F_ACK), 'delete-udp: the dump before it');
    const ours = encode({ op: 'delete', key: validate.key(udpKey) });
    t.equal(hex(ours.subarray(0, 20), NLM_F_NONREC).slice(8, 16), hex(tool.bytes.subarray(0, 20), NLM_F_NONREC).slice(8, 16), 'delete-udp: type and flags');
    t.equal(ours.subarray(16, 20).toString('hex'), tool.bytes.subarray(16, 20).toString('hex'), 'delete-udp: nfgenmsg');
    const mine = attrs(ours);
    const theirs = attrs(tool.bytes);
    t.same([...mine.keys()], [1], 'our delete carries the original tuple only');
    t.equal(mine.get(1), theirs.get(1), 'delete-udp: the original tuple, byte for byte');
  });
}
