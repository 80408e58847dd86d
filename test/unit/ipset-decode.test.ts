// Decoding recorded kernel replies: the entries we print for a dump must be
// exactly what `ipset save` printed for the same bytes
// (test/fixtures/ipset-save, made by its capture.sh), and malformed input
// must fail cleanly, never read out of bounds.
import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { native } from '../../lib/netlink/binding.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.join(here, '../fixtures');
const IPSET = 6 << 8;
const LIST = 7;
const SAVE = 8;

interface Fixture {
  command: string;
  received: string[];
  stdout?: string;
}

const load = (p: string) => JSON.parse(readFileSync(path.join(fixtures, p), 'utf8')) as Fixture;

/** The LIST/SAVE data messages of a recorded conversation. */
function dumpMessages(fx: Fixture): Buffer[] {
  const out: Buffer[] = [];
  for (const h of fx.received) {
    const d = Buffer.from(h, 'hex');
    for (let at = 0; at + 16 <= d.length; ) {
      const len = d.readUInt32LE(at);
      const type = d.readUInt16LE(at + 4);
      if (len < 16) break;
      if (type === (IPSET | LIST) || type === (IPSET | SAVE)) out.push(d.subarray(at, at + len));
      at += (len + 3) & ~3;
    }
  }
  return out;
}

interface DecodedSet {
  name: string;
  type: string;
  family?: string;
  entries: string[];
  [k: string]: unknown;
}

t.test('decoded dumps print as `ipset save` printed them', async (t) => {
  const dir = path.join(fixtures, 'ipset-save');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  t.ok(files.length >= 6, 'fixtures present');
  for (const file of files) {
    const fx = load(path.join('ipset-save', file));
    const sets = native.ipsetDecodeList(dumpMessages(fx)) as DecodedSet[];
    const ours = sets.flatMap((s) => s.entries.map((e) => `add ${s.name} ${e}`));
    const theirs = fx.stdout!.split('\n').filter((l) => l.startsWith('add '));
    t.same(ours.sort(), theirs.sort(), `${file}: ${theirs.length} entries`);
    // Each create line names the type and, for hash sets, the family.
    for (const s of sets) {
      const create = fx.stdout!.split('\n').find((l) => l.startsWith(`create ${s.name} `))!;
      t.match(create, `create ${s.name} ${s.type}`, `${file}: ${s.name} type`);
      if (s.family && s.type.startsWith('hash:')) t.match(create, `family ${s.family} `, `${file}: ${s.name} family`);
    }
  }
});

t.test('header fields', async (t) => {
  const [a] = native.ipsetDecodeList(dumpMessages(load('ipset-save/hash-ip-extensions.json'))) as DecodedSet[];
  t.match(a, { name: 'a', type: 'hash:ip', family: 'inet', hashSize: 1024, maxElem: 65536, timeout: 300, counters: true, comment: true, skbinfo: true, bucketSize: 12 });
  const sets = native.ipsetDecodeList(dumpMessages(load('ipset-save/bitmaps-lists.json'))) as DecodedSet[];
  const byName = new Map(sets.map((s) => [s.name, s]));
  t.match(byName.get('h'), { type: 'bitmap:port', range: '1024-65535', timeout: 0 });
  t.match(byName.get('i'), { type: 'bitmap:ip', range: '10.0.0.0-10.0.255.255', netmask: 24 });
  t.match(byName.get('j'), { type: 'list:set', size: 8, entries: ['h', 'i'] });
});

t.test('types and options a kernel may lack, as the tool printed them where it had them', async (t) => {
  // Sets of every newer type (the sandbox kernel has them all).
  const fx = load('ipset-6.1/list-new-types.json');
  const sets = native.ipsetDecodeList(dumpMessages(fx)) as DecodedSet[];
  const ours = sets.flatMap((s) => s.entries.map((e) => `add ${s.name} ${e}`));
  const theirs = fx.stdout!.split('\n').filter((l) => l.startsWith('add '));
  t.same(ours.sort(), theirs.sort(), `${theirs.length} entries: MACs, marks, nets, /0, wildcard`);
  const byName = new Map(sets.map((s) => [s.name, s]));
  t.match(byName.get('c'), { type: 'hash:ip,mark', family: 'inet', markmask: 0xff00 });
  t.match(fx.stdout, /create c hash:ip,mark family inet markmask 0x0000ff00 /);
  t.match(byName.get('f'), { type: 'bitmap:ip,mac', range: '10.0.0.0-10.0.0.255', counters: true });
  t.same(byName.get('j')?.entries, ['a', 'c', 'b'], 'list:set members in the order the kernel keeps (c went in before b)');
  // bitmask (the host kernel has it): the header carries it, as `list -t` prints it.
  const bm = load('ipset/list-header-bitmask.json');
  const [h] = native.ipsetDecodeList(dumpMessages(bm)) as DecodedSet[];
  t.match(h, { type: 'hash:ip', bitmask: '255.255.0.255', revision: 6 });
  t.equal(h.netmask, undefined, 'no netmask: the kernel reports one or the other');
  t.match(bm.stdout, /Header: family inet .*bitmask 255\.255\.0\.255 /);
});

t.test('a set spread over many messages is merged into one', async (t) => {
  const fx = load('ipset-save/large.json');
  const msgs = dumpMessages(fx);
  t.ok(msgs.length > 5, `${msgs.length} messages`);
  const sets = native.ipsetDecodeList(msgs) as DecodedSet[];
  t.equal(sets.length, 1);
  t.equal(sets[0].entries.length, 3000);
  const big = load('ipset/list-large.json');
  const [s] = native.ipsetDecodeList(dumpMessages(big)) as DecodedSet[];
  t.equal(s.entries.length, 2000, 'ipset/list-large: 2000 entries');
  t.equal(s.elements, 2000, 'matches the header count');
});

t.test('recorded list replies of the golden fixtures', async (t) => {
  const ext = native.ipsetDecodeList(dumpMessages(load('ipset/list-extensions.json'))) as DecodedSet[];
  t.same(ext[0].entries.sort(), [
    '10.0.0.1,tcp:80 timeout 99 packets 5 bytes 500 comment "hello" skbmark 0x10/0xff',
    '10.0.0.2,udp:53 timeout 299 packets 0 bytes 0',
  ]);
  const names = native.ipsetDecodeList(dumpMessages(load('ipset/list-names.json'))) as DecodedSet[];
  t.same(names.map((s) => s.name), ['a', 'b']);
  const save = native.ipsetDecodeList(dumpMessages(load('ipset/save.json'))) as DecodedSet[];
  t.same(save.map((s) => [s.name, s.entries]), [['a', ['10.0.0.1']], ['b', ['10.1.0.0/16,tcp:80']]]);
  for (const dir of ['ipset', 'ipset-6.1']) {
    const p = path.join(dir, 'create-hash-ip.json');
    if (!existsSync(path.join(fixtures, p))) continue;
    const fx = load(p);
    const proto = Buffer.from(fx.received[0], 'hex');
    t.same(native.ipsetDecodeReply(proto, 'protocol'), { version: 7, min: 6 }, `${dir}: protocol reply`);
    const type = native.ipsetDecodeReply(Buffer.from(fx.received[1], 'hex'), 'type');
    t.ok(type.revision >= 5, `${dir}: hash:ip revision ${type.revision}`);
  }
});

t.test('the failing line number is read back from an echoed request', async (t) => {
  const [msg] = native.ipsetEncode({ cmd: 'addMany', name: 's', type: 'hash:ip', entries: '10.0.0.1\n10.0.0.2\n10.0.0.3' });
  t.equal(native.ipsetEchoedLineno(msg), 1, 'command-level LINENO is the first entry');
  // The kernel overwrites it with the failing element's LINENO, as raw bytes.
  const at = msg.indexOf(Buffer.from([8, 0, 9, 0x40]));
  msg.writeUInt32BE(3, at + 4);
  t.equal(native.ipsetEchoedLineno(msg), 3);
  t.equal(native.ipsetEchoedLineno(Buffer.alloc(3)), 0, 'malformed echo: 0');
});

t.test('malformed input never crashes the decoder', async (t) => {
  const seeds = [
    ...dumpMessages(load('ipset-save/hash-ip-extensions.json')),
    ...dumpMessages(load('ipset-save/ports.json')),
    ...dumpMessages(load('ipset-save/nets-ifaces.json')),
    ...dumpMessages(load('ipset-save/bitmaps-lists.json')),
  ];
  let seed = 12345;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  let threw = 0;
  for (let i = 0; i < 3000; i++) {
    const m = Buffer.from(seeds[rand(seeds.length)]);
    const mode = rand(3);
    let input = m;
    if (mode === 0) input = m.subarray(0, rand(m.length + 1));
    else if (mode === 1) for (let k = 0; k < 4; k++) m[rand(m.length)] = rand(256);
    else m.writeUInt16LE(rand(65536), 20 + rand(Math.max(1, m.length - 22)));
    try {
      native.ipsetDecodeList([input]);
    } catch (err) {
      threw++;
      if (!(err instanceof Error)) {
        t.fail(`threw a non-Error: ${String(err)}`);
        break;
      }
    }
  }
  t.pass(`3000 mutated messages decoded or refused (${threw} refused)`);
  t.throws(() => native.ipsetDecodeList([Buffer.alloc(10)]), /malformed/);
});

t.test('entries parse and print back in the `ipset save` form', async (t) => {
  const same: Array<[string, string, string]> = [
    ['hash:ip', 'inet', '10.0.0.1'],
    ['hash:ip', 'inet', '10.0.0.0/24'],
    ['hash:ip', 'inet', '10.0.0.1-10.0.0.9'],
    ['hash:ip', 'inet6', 'fd00::1 timeout 5'],
    ['hash:ip,port', 'inet', '10.0.0.1,tcp:80'],
    ['hash:ip,port', 'inet', '10.0.0.1,udp:53 timeout 10 packets 1 bytes 2 comment "a b"'],
    ['hash:ip,port', 'inet', '10.0.0.1,tcp:80-90'],
    ['hash:ip,port', 'inet6', 'fd00::1,tcp:443'],
    ['hash:ip,port,ip', 'inet', '10.0.0.1,tcp:80,10.0.0.2'],
    ['hash:ip,port,net', 'inet', '10.0.0.1,udp:53,10.1.0.0/16 nomatch'],
    ['hash:net', 'inet', '10.0.0.0/24 skbmark 0x1 skbprio 1:2 skbqueue 3'],
    ['hash:net', 'inet', '10.0.0.0/24 skbmark 0x10/0xff'],
    ['hash:net,port', 'inet6', 'fd00::/64,sctp:9'],
    ['hash:net,iface', 'inet', '10.0.0.0/24,eth0'],
    ['hash:net,iface', 'inet', '10.0.0.0/24,physdev:eth1'],
    ['hash:net,iface', 'inet', '10.0.0.0/24,wild+'],
    ['bitmap:port', 'inet', '30080'],
    ['bitmap:ip', 'inet', '10.0.0.5 timeout 3'],
    ['list:set', 'inet', 'other timeout 5'],
  ];
  for (const [type, family, text] of same) t.equal(native.ipsetCanonical(type, family, text), text, `${type} ${text}`);
  const normalized: Array<[string, string, string, string]> = [
    ['hash:ip,port', 'inet', '10.0.0.1,80', '10.0.0.1,tcp:80'],
    ['hash:ip,port', 'inet', '10.0.0.1,icmp:8/0', '10.0.0.1,icmp:echo-request'],
    ['hash:ip,port', 'inet', '10.0.0.1,icmp:ping', '10.0.0.1,icmp:echo-request'],
    ['hash:ip,port', 'inet6', 'fd00::1,icmpv6:128/0', 'fd00::1,ipv6-icmp:echo-request'],
    ['hash:ip,port', 'inet', '10.0.0.1,6:22', '10.0.0.1,tcp:22'],
    ['hash:ip', 'inet6', 'FD00:0::1', 'fd00::1'],
    ['hash:net', 'inet', '10.0.0.1/32', '10.0.0.1'],
    ['hash:ip,port', 'inet', '10.0.0.1,tcp:80 comment x', '10.0.0.1,tcp:80 comment "x"'],
    ['hash:net', 'inet', '10.0.0.0/8 skbmark 0x5/0xffffffff', '10.0.0.0/8 skbmark 0x5'],
  ];
  for (const [type, family, text, want] of normalized) t.equal(native.ipsetCanonical(type, family, text), want, `${text} -> ${want}`);
});

t.test('bad entries throw TypeError/RangeError naming the field', async (t) => {
  const bad: Array<[string, string, string, ErrorConstructor, RegExp]> = [
    ['hash:ip', 'inet', '10.0.0.x', TypeError, /ip must be an IPv4 address/],
    ['hash:ip', 'inet', 'fd00::1', TypeError, /ip must be an IPv4/],
    ['hash:ip', 'inet6', '10.0.0.1', TypeError, /ip must be an IPv6/],
    ['hash:net', 'inet', '10.0.0.0/33', RangeError, /prefix length must be 1..32/],
    ['hash:ip,port', 'inet', '10.0.0.1', TypeError, /2 comma-separated parts/],
    ['hash:ip,port', 'inet', '10.0.0.1,tcp:70000', RangeError, /port must be a port number/],
    ['hash:ip,port', 'inet', '10.0.0.1,tcp:nosuchservice', TypeError, /port must be a port number 0..65535 or a service name/],
    ['hash:ip,port', 'inet', '10.0.0.1,nosuchproto:1', TypeError, /proto unknown protocol/],
    ['hash:ip,port', 'inet', '10.0.0.1,icmpv6:1/0', TypeError, /icmpv6 needs a set of family inet6/],
    ['hash:ip,port', 'inet', '10.0.0.1,gre:5', TypeError, /has no ports/],
    ['hash:ip', 'inet', '10.0.0.1 timeout 99999999', RangeError, /timeout must be/],
    ['hash:ip', 'inet', '10.0.0.1 frobnicate 1', TypeError, /unknown option/],
    ['hash:ip', 'inet', '10.0.0.1 comment "open', TypeError, /closing quote/],
    ['hash:ip', 'inet', '10.0.0.1 nomatch', TypeError, /nomatch is not supported by hash:ip/],
    ['hash:net', 'inet', '10.0.0.0/8 skbmark 5', TypeError, /skbmark must be 0xMARK/],
    ['hash:net,iface', 'inet', '10.0.0.0/8,averyveryverylongname', TypeError, /iface must be an interface name/],
    ['list:set', 'inet', 'x'.repeat(32), RangeError, /name set names are at most 31/],
  ];
  for (const [type, family, text, kind, msg] of bad) {
    t.throws(() => native.ipsetCanonical(type, family, text), kind, `${text}: ${kind.name}`);
    t.throws(() => native.ipsetCanonical(type, family, text), { message: msg }, `${text}: ${msg}`);
  }
});

t.test('kernel error codes get the meaning of the set kind and command', async (t) => {
  const c = native.ipsetConstants;
  t.match(native.ipsetDescribeError(c.IPSET_ERR_EXIST, 9), { code: 'IPSET_ERR_EXIST', message: /already in the set/ });
  t.match(native.ipsetDescribeError(c.IPSET_ERR_EXIST, 10), { code: 'IPSET_ERR_EXIST', message: /not in the set/ });
  t.match(native.ipsetDescribeError(c.IPSET_ERR_TYPE_SPECIFIC, 9, 'hash:ip'), { code: 'IPSET_ERR_HASH_FULL' });
  t.match(native.ipsetDescribeError(c.IPSET_ERR_TYPE_SPECIFIC, 9, 'bitmap:port'), { code: 'IPSET_ERR_BITMAP_RANGE' });
  t.match(native.ipsetDescribeError(c.IPSET_ERR_TYPE_SPECIFIC, 9, 'list:set'), { code: 'IPSET_ERR_NAME' });
  t.match(native.ipsetDescribeError(2, 7), { code: 'ENOENT', message: /does not exist/ });
  t.equal(c.IPSET_ERR_EXIST, 4103, 'from the uapi header');
});
