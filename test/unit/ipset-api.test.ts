// The TypeScript layer's checks: names, options and structured entries are
// validated (TypeError/RangeError naming the field, with the library's
// codes) before anything is sent; and what reads return is taken back by
// the writes.
import t from 'tap';

import { native } from '../../lib/netlink/binding.js';
import { checkEntry, entryText } from '../../lib/ipset/entries.js';
import { IpsetBulkError, IpsetError, IpsetUnsupportedError } from '../../lib/ipset/errors.js';
import { NetlinkError } from '../../lib/netlink/errors.js';
import { infoFromHeader, specFromHeader } from '../../lib/ipset/set-info.js';
import type { SetHeader } from '../../lib/ipset/types.js';
import * as check from '../../lib/ipset/validate.js';

t.test('set names and types', async (t) => {
  t.equal(check.setName('ok-name'), 'ok-name');
  t.throws(() => check.setName(''), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' });
  t.throws(() => check.setName('x'.repeat(32)), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: /name must be at most 31 bytes long/ });
  t.throws(() => check.setName(5), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  t.equal(check.MAX_NAME_LENGTH, native.ipsetConstants.IPSET_MAXNAMELEN - 1, 'from the uapi header');
  for (const type of ['hash:net,net', 'hash:net,port,net', 'hash:ip,mark', 'hash:mac', 'hash:ip,mac', 'bitmap:ip,mac']) t.equal(check.setType(type), type);
  t.throws(() => check.setType('hash:foo'), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', message: /type must be one of/ });
  t.same([...native.ipsetConstants.setTypes].sort(), [...(await import('../../lib/ipset/types.js')).SET_TYPES].sort(), 'the native type table has every type');
});

t.test('create options', async (t) => {
  t.same(check.createOptions('hash:ip', { family: 'inet6', hashSize: 4096, counters: true }), { family: 'inet6', hashSize: 4096, counters: true });
  t.throws(() => check.createOptions('hash:ip', { hashsize: 1 }), { name: 'TypeError', message: /options.hashsize must be left out \(not a field it takes/ });
  t.throws(() => check.createOptions('hash:ip', { timeout: -1 }), { name: 'RangeError', message: /options.timeout must be an integer from 0/ });
  t.throws(() => check.createOptions('hash:ip', { hashSize: 1.5 }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' }, '1.5 is a RangeError, by the library rule');
  t.throws(() => check.createOptions('hash:ip', { family: 'ipv4' }), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' });
  t.throws(() => check.createOptions('hash:ip', { counters: undefined, comment: 'yes' }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /options.comment must be a boolean/ });
  t.same(check.createOptions('hash:ip', { bitmask: '255.255.000.255'.replace(/000/, '0') }), { bitmask: '255.255.0.255' });
  t.same(check.createOptions('hash:ip,port', { family: 'inet6', bitmask: 'FFFF:ffff::' }), { family: 'inet6', bitmask: 'ffff:ffff::' }, 'written as the kernel reports it');
  t.throws(() => check.createOptions('hash:ip', { bitmask: 'ffff::' }), { name: 'TypeError', message: /mask of the set's family \(inet\)/ });
  t.throws(() => check.createOptions('hash:ip', { bitmask: '0.0.0.0' }), { name: 'TypeError', message: /not all zeroes/ });
  t.throws(() => check.createOptions('hash:ip', { netmask: 24, bitmask: '255.0.0.0' }), { name: 'TypeError', message: /exclude each other/ });
  t.throws(() => check.createOptions('hash:ip,mark', { markmask: 0 }), { name: 'RangeError' });
  t.throws(() => check.createOptions('bitmap:ip', { range: '10.0.0.1/32' }), { name: 'RangeError', message: /CIDR from 0 to 31/ });
  t.throws(() => check.createOptions('bitmap:port', { range: '10-5' }), { name: 'TypeError', message: /FROM not above TO/ });
  t.throws(() => check.createOptions('bitmap:ip,mac', { range: 'fd00::/64' }), { name: 'TypeError', message: /IPv4/ });
});

// The four defects of the issue, each refused before.
t.test('hash:net,iface takes prefix /0, written 0.0.0.0/0 or 0/0', async (t) => {
  t.equal(native.ipsetCanonical('hash:net,iface', 'inet', '0.0.0.0/0,eth0'), '0.0.0.0/0,eth0');
  t.equal(native.ipsetCanonical('hash:net,iface', 'inet', '0/0,eth0'), '0.0.0.0/0,eth0');
  t.equal(native.ipsetCanonical('hash:net,iface', 'inet6', '::/0,eth0'), '::/0,eth0');
  t.throws(() => native.ipsetCanonical('hash:net', 'inet', '0.0.0.0/0'), { name: 'RangeError', message: /prefix length must be 1..32/ }, 'other types still refuse /0, as the kernel does');
});

t.test('bitmap:ip takes a range written NET/0', async (t) => {
  t.same(check.createOptions('bitmap:ip', { range: '0.0.0.0/0', netmask: 16 }), { range: '0.0.0.0/0', netmask: 16 });
  const [msg] = native.ipsetEncode({ cmd: 'create', name: 's', type: 'bitmap:ip', range: '0.0.0.0/0', netmask: 16 });
  t.ok(msg.includes(Buffer.from([5, 0, 3, 0, 0])), 'CIDR 0 is sent (as the tool sends it: test/fixtures/ipset*/create-bitmap-ip-net0)');
});

t.test('hash:ip,port takes netmask (revision 7)', async (t) => {
  t.same(check.createOptions('hash:ip,port', { netmask: 24 }), { netmask: 24 });
  t.doesNotThrow(() => native.ipsetEncode({ cmd: 'create', name: 's', type: 'hash:ip,port', netmask: 24 }));
  t.throws(() => native.ipsetEncode({ cmd: 'create', name: 's', type: 'hash:ip,port,ip', netmask: 24 }), { name: 'TypeError', message: /netmask applies to hash:ip, hash:ip,port, hash:net,net, bitmap:ip sets only/ });
});

const bitmaskHeader: SetHeader = {
  name: 'bm', type: 'hash:ip', revision: 6, family: 'inet', hashSize: 1024, maxElem: 65536, bitmask: '255.255.0.255',
  bucketSize: 12, initval: 0x1234, counters: false, comment: false, skbinfo: false, forceadd: false, references: 0, memSize: 200, elements: 3,
};

t.test('replace() keeps bitmask, and every create option a header reports', async (t) => {
  const spec = specFromHeader(bitmaskHeader);
  t.same(spec, { type: 'hash:ip', family: 'inet', hashSize: 1024, maxElem: 65536, bitmask: '255.255.0.255', bucketSize: 12, initval: 0x1234, counters: false, comment: false, skbinfo: false, forceadd: false });
  const markmask = specFromHeader({ ...bitmaskHeader, type: 'hash:ip,mark', bitmask: undefined as never, markmask: 0xff00 });
  t.match(markmask, { markmask: 0xff00 });
  t.same(check.createOptions(spec.type, spec), { family: 'inet', hashSize: 1024, maxElem: 65536, bitmask: '255.255.0.255', bucketSize: 12, initval: 0x1234, counters: false, comment: false, skbinfo: false, forceadd: false });
});

t.test('a header is a create spec as it comes (no "unknown create option name")', async (t) => {
  t.doesNotThrow(() => check.createOptions(bitmaskHeader.type, bitmaskHeader));
  t.same(infoFromHeader(bitmaskHeader), { type: 'hash:ip', family: 'inet', support: { timeout: false, counters: false, comment: false, skbinfo: false, revision: 6 } });
});

t.test('element options print as ipset save prints them', async (t) => {
  t.equal(
    check.elementOptionsText({ comment: 'x y', timeout: 5, bytes: 2n, packets: 1, nomatch: true, wildcard: true, skbmark: [0x10, 0xff], skbprio: '1:2', skbqueue: 3 }),
    ' timeout 5 nomatch wildcard packets 1 bytes 2 comment "x y" skbmark 0x10/0xff skbprio 1:2 skbqueue 3',
  );
  t.equal(check.elementOptionsText({ before: 'other' }), ' before other');
  t.equal(check.elementOptionsText({ after: 'other' }), ' after other');
  t.throws(() => check.elementOptionsText({ before: 'a', after: 'b' }), { name: 'TypeError', message: /options.after/ });
  t.throws(() => check.elementOptionsText({ before: 'a b' }), { name: 'TypeError', message: /without spaces/ });
  t.throws(() => check.elementOptionsText({ comment: 'a"b' }), { name: 'TypeError', message: /options.comment/ });
  t.throws(() => check.elementOptionsText({ comment: 'x'.repeat(256) }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
  t.throws(() => check.elementOptionsText({ timeout: 1.5 }), RangeError);
  t.throws(() => check.elementOptionsText({ exist: true }), { name: 'TypeError', message: /options.exist must be left out \(not a field it takes/ });
  t.equal(check.elementOptionsText({ exist: true }, ['exist']), '');
});

t.test('structured entries', async (t) => {
  t.equal(entryText('hash:ip', { ip: '10.0.0.1' }), '10.0.0.1');
  t.equal(entryText('hash:net', { ip: '10.0.0.0', cidr: 24, nomatch: true }), '10.0.0.0/24 nomatch');
  t.equal(entryText('hash:ip,port', { ip: '10.0.0.1', proto: 'udp', port: 53, timeout: 5 }), '10.0.0.1,udp:53 timeout 5');
  t.equal(entryText('hash:ip,port,net', { ip: '10.0.0.1', proto: 'tcp', port: 80, ip2: '10.1.0.0', cidr2: 16 }), '10.0.0.1,tcp:80,10.1.0.0/16');
  t.equal(entryText('hash:net,iface', { ip: '10.0.0.0', cidr: 8, iface: 'eth0', physdev: true }), '10.0.0.0/8,physdev:eth0');
  t.equal(entryText('hash:net,iface', { ip: '0.0.0.0', cidr: 0, iface: 'eth', wildcard: true }), '0.0.0.0/0,eth wildcard');
  t.equal(entryText('hash:net,net', { ip: '10.0.0.0', cidr: 24, ip2: '10.1.0.0', cidr2: 16 }), '10.0.0.0/24,10.1.0.0/16');
  t.equal(entryText('hash:net,port,net', { ip: '10.0.0.0', cidr: 24, port: 53, proto: 'udp', ip2: '10.1.0.1' }), '10.0.0.0/24,udp:53,10.1.0.1');
  t.equal(entryText('hash:ip,mark', { ip: '10.0.0.1', mark: 0x12 }), '10.0.0.1,18');
  t.equal(entryText('hash:mac', { mac: '00:11:22:aa:bb:cc' }), '00:11:22:aa:bb:cc');
  t.equal(entryText('hash:ip,mac', { ip: 'fd00::1', mac: '00:11:22:aa:bb:cc' }), 'fd00::1,00:11:22:aa:bb:cc');
  t.equal(entryText('bitmap:ip,mac', { ip: '10.0.0.2' }), '10.0.0.2');
  t.equal(entryText('bitmap:port', { port: 80 }), '80');
  t.equal(entryText('list:set', { name: 'other', before: 'third' }), 'other before third');
  t.throws(() => checkEntry('a\nb', 'entries[3]'), { name: 'TypeError', message: /entries\[3\] must be one line/ });
  t.throws(() => entryText('hash:ip,port', { ip: '10.0.0.1' }, 'entries[0]'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /entries\[0\].port must be a value \(a hash:ip,port element has one\)/ });
  t.throws(() => entryText('hash:ip,mark', { ip: '10.0.0.1', mark: -1 }), { name: 'RangeError', message: /entry.mark/ });
  t.throws(() => checkEntry(7, 'entry'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
});

t.test('errors keep their parts and format once', async (t) => {
  const e = new IpsetError({ errno: 4103, code: 'IPSET_ERR_EXIST', meaning: 'the element is already in the set', operation: 'add', set: 's', entry: '10.0.0.1' });
  t.ok(e instanceof NetlinkError);
  t.match(e, { set: 's', entry: '10.0.0.1', meaning: 'the element is already in the set', code: 'IPSET_ERR_EXIST' });
  t.equal(e.message, 'add {"set":"s","entry":"10.0.0.1"} failed: IPSET_ERR_EXIST: the element is already in the set');
  const u = new IpsetUnsupportedError({ operation: 'create', set: 'x', setType: 'hash:ip', option: 'bitmask', revision: 5, needs: 6 });
  t.ok(u instanceof IpsetError && u instanceof NetlinkError);
  t.match(u, { code: 'EOPNOTSUPP', setType: 'hash:ip', option: 'bitmask', revision: 5, needs: 6 });
  t.equal(u.message, 'create x failed: EOPNOTSUPP: option bitmask needs revision 6 of hash:ip; this kernel has revision 5; nothing was created');
  const b = new IpsetBulkError({ errno: 4103, code: 'IPSET_ERR_EXIST', message: 'the element is already in the set' }, 'addMany', 's~1', {
    index: 1, entry: 'b', applied: 1, failures: [{ index: 1, entry: 'b', errno: 4103, code: 'IPSET_ERR_EXIST', message: 'the element is already in the set' }], skipped: [], unconfirmed: [], total: 2,
  });
  t.equal(b.halt, undefined);
  t.equal(b.meaning, 'the element is already in the set');
  const r = b.asReplace({ set: 's', temporary: 's~1' });
  t.match(r, { set: 's', replace: { set: 's', temporary: 's~1' }, applied: 1, index: 1 });
  t.match(r.message, /^addMany s~1 failed: IPSET_ERR_EXIST: entry 1 \(b\) was refused: .*; 1 of 2 entries was applied; replace s swapped nothing in/);
});

t.test('list:set members placed the tool\'s older way, NAME,before|after,REF', async (t) => {
  const bytes = (entries: string) => native.ipsetEncode({ cmd: 'add', name: 's', type: 'list:set', entries })[0].toString('hex');
  t.equal(bytes('a,before,b'), bytes('a before b'));
  t.equal(bytes('a,after,b'), bytes('a after b'));
  t.equal(native.ipsetCanonical('list:set', 'inet', 'a,b'), 'a,b', 'other commas belong to the name');
  t.throws(() => native.ipsetCanonical('list:set', 'inet', 'a,before,'), { name: 'TypeError', message: /before needs a set name/ });
  t.throws(() => native.ipsetCanonical('list:set', 'inet', ',before,b'), { name: 'TypeError', message: /name is empty/ }, 'no member name before ,before (the fuzzer found it accepted, then written as nothing)');
  t.throws(() => native.ipsetCanonical('list:set', 'inet', 'a,before,b after c'), { name: 'TypeError', message: /cannot follow another before or after/ });
  t.throws(() => native.ipsetCanonical('list:set', 'inet', 'c\r after b'), { name: 'TypeError', message: /control characters/ }, 'a CR would not survive a line of restore text');
  t.throws(() => native.ipsetCanonical('list:set', 'inet', 'c after b\tx'), { name: 'TypeError', message: /after must be a set name/ });
});
