// The set types and options a kernel may lack (hash:net,net,
// hash:net,port,net, hash:ip,mark, hash:mac, hash:ip,mac, bitmap:ip,mac;
// bitmask, markmask, netmask on hash:ip,port and hash:net,net; hash:net,iface
// /0 and wildcard; bitmap:ip ranges written NET/0), each case in fresh
// network namespaces. Which the running kernel has is asked of the ipset
// tool (`ipset create` in a scratch namespace):
//  - where it has them, both ways: what the library writes, `ipset save`
//    shows exactly; what `ipset restore` writes, list() returns exactly;
//    header() reports every create option the tool prints; replace() keeps
//    every one of them (the tool's create line is the same after it);
//  - where it lacks them, create() refuses with an IpsetUnsupportedError
//    naming what the tool says is missing (the type, or the option with the
//    revision it needs and the one the kernel has), and creates nothing.
// The host kernel and the 6.1 sandbox differ (the host has bitmask but
// none of the newer types; the sandbox the types but not bitmask), so
// between them both branches run for most cases.
import t from 'tap';

import { IpsetUnsupportedError, type CreateOptions, type SetHeader, type SetType } from '../../lib/ipset/index.js';
import { fieldsOf, kernelTakes, listedLines, openIpset, sameLines, toolSave } from '../support/ipset-tool.js';
import { freshNetns } from '../support/netns.js';

interface SetCase {
  name: string;
  type: SetType;
  options?: CreateOptions;
  /** The same set as `ipset create` takes it, after the name. */
  tool: string;
  entries: string[];
}

const cases: Array<{ title: string; sets: SetCase[] }> = [
  {
    title: 'hash:net,net, inet and inet6',
    sets: [
      {
        name: 'nn4', type: 'hash:net,net', options: { timeout: 300, counters: true, comment: true }, tool: 'hash:net,net timeout 300 counters comment',
        entries: ['10.0.0.0/24,10.1.0.0/16 comment "a b"', '10.0.0.1,10.1.0.1 nomatch timeout 0', '10.2.0.0/16,10.3.0.0/30 packets 3 bytes 4'],
      },
      { name: 'nn6', type: 'hash:net,net', options: { family: 'inet6' }, tool: 'hash:net,net family inet6', entries: ['fd00::/64,fd01::/48', 'fd00::1,fd01::1'] },
    ],
  },
  {
    title: 'hash:net,port,net, with skbinfo',
    sets: [
      {
        name: 'npn4', type: 'hash:net,port,net', options: { skbinfo: true }, tool: 'hash:net,port,net skbinfo',
        entries: ['10.0.0.0/24,udp:53,10.1.0.0/16 skbmark 0x5', '10.0.0.1,tcp:80,10.1.0.1 nomatch', '10.0.0.0/8,icmp:echo-request,10.9.0.0/16 skbprio 1:2 skbqueue 3'],
      },
      { name: 'npn6', type: 'hash:net,port,net', options: { family: 'inet6' }, tool: 'hash:net,port,net family inet6', entries: ['fd00::/64,sctp:9,fd01::1'] },
    ],
  },
  {
    title: 'hash:ip,mark with markmask',
    sets: [
      { name: 'im', type: 'hash:ip,mark', options: { markmask: 0xff00, timeout: 100 }, tool: 'hash:ip,mark markmask 0xff00 timeout 100', entries: ['10.0.0.1,0x1234', '10.0.0.2,0 timeout 5'] },
      { name: 'im6', type: 'hash:ip,mark', options: { family: 'inet6' }, tool: 'hash:ip,mark family inet6', entries: ['fd00::1,7'] },
    ],
  },
  {
    title: 'hash:mac and hash:ip,mac',
    sets: [
      { name: 'm', type: 'hash:mac', options: { counters: true }, tool: 'hash:mac counters', entries: ['00:11:22:aa:bb:cc packets 1 bytes 2', '0a:0b:0c:0d:0e:0f'] },
      { name: 'ipm4', type: 'hash:ip,mac', options: { comment: true }, tool: 'hash:ip,mac comment', entries: ['10.0.0.1,00:11:22:aa:bb:cc comment "x"'] },
      { name: 'ipm6', type: 'hash:ip,mac', options: { family: 'inet6' }, tool: 'hash:ip,mac family inet6', entries: ['fd00::1,00:11:22:AA:BB:CC'] },
    ],
  },
  {
    title: 'bitmap:ip,mac, with and without the MAC',
    sets: [
      {
        name: 'bim', type: 'bitmap:ip,mac', options: { range: '10.0.0.0/24', skbinfo: true }, tool: 'bitmap:ip,mac range 10.0.0.0/24 skbinfo',
        entries: ['10.0.0.1,00:11:22:aa:bb:cc skbmark 0x10/0xff', '10.0.0.2'],
      },
    ],
  },
  {
    title: 'hash:net,iface: /0 and wildcard',
    sets: [
      { name: 'ni', type: 'hash:net,iface', tool: 'hash:net,iface', entries: ['0.0.0.0/0,eth0', '10.0.0.0/8,veth wildcard', '10.1.0.0/16,physdev:br wildcard nomatch'] },
      { name: 'ni6', type: 'hash:net,iface', options: { family: 'inet6' }, tool: 'hash:net,iface family inet6', entries: ['::/0,lo', 'fd00::/8,eth wildcard'] },
    ],
  },
  {
    title: 'bitmap:ip with a range written NET/0',
    sets: [{ name: 'b0', type: 'bitmap:ip', options: { range: '0.0.0.0/0', netmask: 16 }, tool: 'bitmap:ip range 0.0.0.0/0 netmask 16', entries: ['10.1.0.0/16', '192.168.7.7'] }],
  },
  {
    title: 'bitmask on hash:ip and hash:ip,port, netmask on hash:ip,port',
    sets: [
      { name: 'bm4', type: 'hash:ip', options: { bitmask: '255.255.0.255', timeout: 0 }, tool: 'hash:ip bitmask 255.255.0.255 timeout 0', entries: ['10.1.2.3', '10.1.9.4 timeout 50'] },
      { name: 'ipn', type: 'hash:ip,port', options: { netmask: 24 }, tool: 'hash:ip,port netmask 24', entries: ['10.1.2.3,tcp:80', '10.1.2.9,udp:53'] },
      { name: 'ipb6', type: 'hash:ip,port', options: { family: 'inet6', bitmask: 'ffff:ffff::' }, tool: 'hash:ip,port family inet6 bitmask ffff:ffff::', entries: ['fd00:1:2::3,tcp:443'] },
    ],
  },
  {
    title: 'netmask and bitmask on hash:net,net',
    sets: [
      { name: 'nnm', type: 'hash:net,net', options: { netmask: 16 }, tool: 'hash:net,net netmask 16', entries: ['10.1.2.0/24,10.2.3.0/24'] },
      { name: 'nnb', type: 'hash:net,net', options: { bitmask: '255.0.255.0' }, tool: 'hash:net,net bitmask 255.0.255.0', entries: ['10.1.2.0/24,10.2.3.0/24'] },
    ],
  },
];

/** The header fields the tool's create line stands for, and no others among the create options. */
function sameHeader(t: Tap, h: SetHeader, line: string, what: string) {
  const want: Record<string, unknown> = fieldsOf(line);
  // bitmap:ip,mac is IPv4 only: the kernel reports family inet, the tool does not print it.
  if (h.type.startsWith('bitmap:ip')) want.family = 'inet';
  const ours: Record<string, unknown> = {};
  for (const k of Object.keys(want)) ours[k] = h[k as keyof SetHeader];
  t.same(ours, want, `${what}: header() = ${line}`);
  for (const k of ['family', 'hashSize', 'maxElem', 'netmask', 'bitmask', 'markmask', 'timeout', 'bucketSize', 'initval', 'range', 'size'] as const)
    if (!(k in want)) t.equal(h[k], undefined, `${what}: no ${k}, as the tool prints none`);
}
interface Tap {
  same(found: unknown, wanted: unknown, message: string): unknown;
  equal(found: unknown, wanted: unknown, message: string): unknown;
}

for (const c of cases) {
  t.test(c.title, async (t) => {
    const probe = await freshNetns(t, 'ipset');
    const has: SetCase[] = [];
    for (const s of c.sets) {
      const k = await kernelTakes(probe, s.tool.split(' '));
      if (k.ok) {
        has.push(s);
        continue;
      }
      // The kernel lacks it: refused with what the tool says is missing, nothing created.
      const ipset = await openIpset(t, probe);
      const before = ipset.counters().messagesSent;
      await t.rejects(ipset.create(s.name, s.type, s.options), {
        name: 'IpsetUnsupportedError', code: 'EOPNOTSUPP', setType: s.type, option: k.option, revision: k.revision, needs: k.needs,
      }, `${s.name}: ${k.option ? `${k.option} needs revision ${k.needs}, the kernel has ${k.revision}` : `no ${s.type} in this kernel (${k.stderr.trim()})`}`);
      t.ok(ipset.counters().messagesSent - before <= 2, 'no create was sent (only the protocol and type queries)');
      t.same(await ipset.listNames(), [], `${s.name}: nothing created`);
      const err = await ipset.create(s.name, s.type, s.options).catch((e: unknown) => e);
      t.ok(err instanceof IpsetUnsupportedError, 'an IpsetUnsupportedError');
    }
    if (has.length === 0) return;
    const names = has.map((s) => s.name);

    // The library writes; the tool reads.
    const ns1 = await freshNetns(t, 'ipset');
    const ours = await openIpset(t, ns1);
    for (const s of has) {
      await ours.create(s.name, s.type, s.options);
      t.equal(await ours.addMany(s.name, s.entries), s.entries.length, `${s.name}: all applied`);
    }
    const wrote = await toolSave(ns1);
    sameLines(t, await listedLines(ours, names), [...wrote.adds].sort(), 'our list() = ipset save, after we wrote');
    t.equal(wrote.adds.length, has.reduce((n, s) => n + s.entries.length, 0), 'every entry is there');
    for (const s of has) sameHeader(t, await ours.header(s.name), wrote.creates.get(s.name)!, `${s.name}, ours`);

    // The tool writes; the library reads.
    const ns2 = await freshNetns(t, 'ipset');
    const script = has.flatMap((s) => [`create ${s.name} ${s.tool}`, ...s.entries.map((e) => `add ${s.name} ${e}`)]).join('\n') + '\n';
    await ns2.exec('ipset', ['restore'], script);
    const reader = await openIpset(t, ns2);
    const restored = await toolSave(ns2);
    sameLines(t, await listedLines(reader, names), [...restored.adds].sort(), 'our list() = ipset save, after ipset restore wrote');
    sameLines(t, [...restored.adds].sort(), [...wrote.adds].sort(), 'the same entries whichever wrote them');
    for (const s of has) {
      const line = restored.creates.get(s.name)!;
      const h = await reader.header(s.name);
      sameHeader(t, h, line, `${s.name}, the tool's`);
      t.equal(line.replace(/ initval 0x\w+/, ''), wrote.creates.get(s.name)!.replace(/ initval 0x\w+/, ''), `${s.name}: the same create line whichever created it`);
      // replace() keeps every create option; a header read back creates the same set.
      t.equal(await reader.replace(s.name, s.entries), s.entries.length, `${s.name}: replace()`);
      await reader.create(`${s.name}-copy`, h.type, h);
    }
    const after = await toolSave(ns2);
    const entriesOf = (saved: typeof after, name: string) => saved.adds.filter((l) => l.startsWith(`${name} `)).sort();
    for (const s of has) {
      const line = restored.creates.get(s.name)!;
      t.equal(after.creates.get(s.name), line, `${s.name}: replace() kept ${line}`);
      sameLines(t, entriesOf(after, s.name), entriesOf(restored, s.name), `${s.name}: the same entries after replace()`);
      t.equal(after.creates.get(`${s.name}-copy`), line, `${s.name}: create(name, h.type, header) makes the same set`);
    }
  });
}

t.test('list:set positioning: before and after on add, del and test, against the tool', async (t) => {
  const setup = 'create a hash:ip\ncreate b hash:ip\ncreate c hash:ip\ncreate d hash:ip\ncreate l list:set size 8\n';
  const ns1 = await freshNetns(t, 'ipset');
  const ns2 = await freshNetns(t, 'ipset');
  await ns1.exec('ipset', ['restore'], setup);
  await ns2.exec('ipset', ['restore'], setup);
  const ipset = await openIpset(t, ns1);
  const order = async (ns: typeof ns1) => (await toolSave(ns, 'l')).adds.map((l) => l.slice(2));
  // The library on ns1, the tool on ns2, step by step.
  await ipset.add('l', 'b');
  await ns2.exec('ipset', ['add', 'l', 'b']);
  await ipset.add('l', 'a', { before: 'b' });
  await ns2.exec('ipset', ['add', 'l', 'a', 'before', 'b']);
  await ipset.add('l', { name: 'c', after: 'b' });
  await ns2.exec('ipset', ['add', 'l', 'c', 'after', 'b']);
  await ipset.add('l', 'd after a');
  await ns2.exec('ipset', ['add', 'l', 'd', 'after', 'a']);
  t.same(await order(ns1), ['a', 'd', 'b', 'c'], 'the library placed them');
  t.same(await order(ns2), ['a', 'd', 'b', 'c'], 'the tool placed them the same');
  t.same((await ipset.list('l')).entries, ['a', 'd', 'b', 'c'], 'list() keeps the order');
  for (const [member, where, ref] of [['a', 'before', 'd'], ['a', 'after', 'd'], ['d', 'after', 'a'], ['c', 'after', 'b'], ['c', 'before', 'b']] as const) {
    const tool = (await ns2.tryExec('ipset', ['test', 'l', member, where, ref])).code === 0;
    t.equal(await ipset.test('l', member, { [where]: ref }), tool, `test ${member} ${where} ${ref}: ${tool}, as the tool says`);
  }
  await t.rejects(ipset.del('l', 'c', { after: 'a' }), { code: 'IPSET_ERR_REF_EXIST', set: 'l' }, 'c is not right after a');
  t.not((await ns2.tryExec('ipset', ['del', 'l', 'c', 'after', 'a'])).code, 0, 'the tool refuses it too');
  await t.rejects(ipset.add('l', 'c', { before: 'missing' }), { code: 'IPSET_ERR_NAMEREF' });
  await ipset.del('l', 'd', { after: 'a' });
  await ns2.exec('ipset', ['del', 'l', 'd', 'after', 'a']);
  t.same(await order(ns1), ['a', 'b', 'c']);
  t.same(await order(ns2), ['a', 'b', 'c']);
  await t.rejects(ipset.del('l', 'a', { timeout: 5 } as never), { name: 'TypeError', message: /options.timeout must be left out \(not a field it takes/ }, 'del takes no element options');
  await t.rejects(ipset.del('l', 'a timeout 5'), { name: 'TypeError', message: /timeout is not an option of del/ }, 'nor in the text, as the tool');
});
