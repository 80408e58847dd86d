// Create options and set headers, cross-checked with the `ipset` tool both
// ways, each direction in a fresh network namespace:
//  - what create() writes (family, hashsize, maxelem, netmask, timeout,
//    counters, comment, skbinfo, bucketsize, initval, range, size) is
//    exactly the `create` line `ipset save` prints, and the same line the
//    tool's own `ipset create` with those options gives;
//  - for sets `ipset restore` made with every option, header() and list()
//    return every field `ipset save` and `ipset list -t` print (revision,
//    memory, references and element count included);
//  - forceadd, which the tool accepts but never prints, is shown by its
//    effect: the tool can add to a full forceadd set;
//  - the revision we report is the `Revision:` line of `ipset list -t`, for
//    every type, whichever created the set.
// Runs on the host kernel and in the 6.1 sandbox.
import t from 'tap';

import type { CreateOptions, SetHeader, SetType } from '../../lib/ipset/index.js';
import { fieldsOf, openIpset, toolHeader, toolSave } from '../support/ipset-tool.js';
import { freshNetns, type Netns } from '../support/netns.js';

interface Case {
  name: string;
  type: SetType;
  options: CreateOptions;
  /** The create line `ipset save` prints after "create NAME "; `initval 0x~` when the kernel picks it. */
  line: string;
  /** What to give `ipset create` for the same set, when it differs from `line`. */
  tool?: string;
}

const cases: Case[] = [
  {
    name: 'ip4', type: 'hash:ip',
    options: { family: 'inet', hashSize: 2048, maxElem: 5000, netmask: 24, timeout: 600, counters: true, comment: true, skbinfo: true, bucketSize: 8, initval: 0x1234abcd },
    line: 'hash:ip family inet hashsize 2048 maxelem 5000 netmask 24 timeout 600 counters comment skbinfo bucketsize 8 initval 0x1234abcd',
  },
  {
    name: 'ip6', type: 'hash:ip', options: { family: 'inet6', netmask: 64, initval: 0xdeadbeef },
    line: 'hash:ip family inet6 hashsize 1024 maxelem 65536 netmask 64 bucketsize 12 initval 0xdeadbeef',
  },
  {
    name: 'ipport6', type: 'hash:ip,port',
    options: { family: 'inet6', hashSize: 4096, maxElem: 100000, timeout: 300, counters: true, comment: true, skbinfo: true, bucketSize: 4, initval: 0xa01 },
    line: 'hash:ip,port family inet6 hashsize 4096 maxelem 100000 timeout 300 counters comment skbinfo bucketsize 4 initval 0x00000a01',
  },
  {
    name: 'ipportip', type: 'hash:ip,port,ip', options: { hashSize: 64, maxElem: 10, timeout: 0, bucketSize: 12, initval: 0x80000000 },
    line: 'hash:ip,port,ip family inet hashsize 64 maxelem 10 timeout 0 bucketsize 12 initval 0x80000000',
  },
  {
    name: 'ipportnet6', type: 'hash:ip,port,net', options: { family: 'inet6', maxElem: 77, counters: true, initval: 0x11111111 },
    line: 'hash:ip,port,net family inet6 hashsize 1024 maxelem 77 counters bucketsize 12 initval 0x11111111',
  },
  {
    name: 'net', type: 'hash:net', options: { hashSize: 128, timeout: 30, comment: true, bucketSize: 6, initval: 0xfeedf00d },
    line: 'hash:net family inet hashsize 128 maxelem 65536 timeout 30 comment bucketsize 6 initval 0xfeedf00d',
  },
  {
    name: 'netport', type: 'hash:net,port', options: { skbinfo: true, counters: true, initval: 0x01020304 },
    line: 'hash:net,port family inet hashsize 1024 maxelem 65536 counters skbinfo bucketsize 12 initval 0x01020304',
  },
  {
    name: 'netiface6', type: 'hash:net,iface', options: { family: 'inet6', hashSize: 256, maxElem: 1000, timeout: 9, counters: true, comment: true, skbinfo: true, initval: 0xabcdef01 },
    line: 'hash:net,iface family inet6 hashsize 256 maxelem 1000 timeout 9 counters comment skbinfo bucketsize 12 initval 0xabcdef01',
  },
  { name: 'defaults', type: 'hash:net', options: {}, line: 'hash:net family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x~' },
  {
    name: 'bmip', type: 'bitmap:ip', options: { range: '10.0.0.0-10.0.255.255', netmask: 24, timeout: 5, counters: true, comment: true, skbinfo: true },
    line: 'bitmap:ip range 10.0.0.0-10.0.255.255 netmask 24 timeout 5 counters comment skbinfo',
  },
  { name: 'bmcidr', type: 'bitmap:ip', options: { range: '10.1.0.0/16' }, line: 'bitmap:ip range 10.1.0.0-10.1.255.255', tool: 'bitmap:ip range 10.1.0.0/16' },
  {
    name: 'bmport', type: 'bitmap:port', options: { range: '10-200', timeout: 5, counters: true, comment: true, skbinfo: true },
    line: 'bitmap:port range 10-200 timeout 5 counters comment skbinfo',
  },
  {
    name: 'list', type: 'list:set', options: { size: 12, timeout: 5, counters: true, comment: true, skbinfo: true },
    line: 'list:set size 12 timeout 5 counters comment skbinfo',
  },
];

const maskInitval = (line: string) => line.replace(/ initval 0x[0-9a-f]{8}/, ' initval 0x~');

/** `ipset save`'s create lines, by set name, after "create NAME ". */
async function createLines(ns: Netns): Promise<Map<string, string>> {
  return (await toolSave(ns)).creates;
}

const open = openIpset;

t.test('what create() writes, ipset save prints exactly, as for the same ipset create', async (t) => {
  const ours = await freshNetns(t, 'ipset');
  const tools = await freshNetns(t, 'ipset');
  const ipset = await open(t, ours);
  for (const c of cases) {
    await ipset.create(c.name, c.type, c.options);
    await tools.exec('ipset', ['create', c.name, ...(c.tool ?? c.line.replace(' initval 0x~', '')).split(' ')]);
  }
  const saved = await createLines(ours);
  const savedTool = await createLines(tools);
  for (const c of cases) {
    // Only where the kernel picked the hash seed is it masked.
    const mask = c.line.includes('initval 0x~') ? maskInitval : (l: string) => l;
    t.equal(mask(saved.get(c.name)!), c.line, `${c.name}: ${c.line}`);
    t.equal(mask(saved.get(c.name)!), mask(savedTool.get(c.name)!), `${c.name}: the same line as the tool's create`);
  }
  t.equal(saved.size, cases.length, 'no other set');
});

t.test('sets ipset restore made with every option: header() and list() return every field', async (t) => {
  const ns = await freshNetns(t, 'ipset');
  // forceadd on every hash set: the tool takes it but never prints it.
  const script = cases.map((c) => `create ${c.name} ${c.tool ?? c.line.replace(' initval 0x~', '')}${c.type.startsWith('hash:') ? ' forceadd' : ''}`);
  await ns.exec('ipset', ['restore'], script.join('\n') + '\n');
  // A member: references and an element. timeout 0 keeps it: the set's default (5 s) could expire it
  // before the loop below reaches this set on a slow machine.
  await ns.exec('ipset', ['add', 'list', 'ip4', 'timeout', '0']);
  const saved = await createLines(ns);
  const ipset = await open(t, ns);
  for (const c of cases) {
    const line = saved.get(c.name)!;
    const tool = await toolHeader(ns, c.name);
    const want = {
      // bitmap:ip is IPv4 only: the kernel reports family inet, the tool does not print it.
      ...(c.type === 'bitmap:ip' ? { family: 'inet' as const } : {}),
      ...fieldsOf(line),
      name: c.name,
      forceadd: c.type.startsWith('hash:'),
      revision: tool.revision,
      memSize: tool.memSize,
      references: tool.references,
    };
    const header = await ipset.header(c.name);
    // Only the fields the tool prints; anything else the header has is
    // either one of those (checked absent below) or kernel bookkeeping.
    const ours: Record<string, unknown> = {};
    for (const k of Object.keys(want)) ours[k] = header[k as keyof SetHeader];
    t.same(ours, want, `${c.name}: header() = ${line}`);
    for (const k of ['family', 'hashSize', 'maxElem', 'netmask', 'timeout', 'bucketSize', 'initval', 'range', 'size'] as const)
      if (!(k in want)) t.equal(header[k], undefined, `${c.name}: no ${k}, as the tool prints none`);
    if (header.elements !== undefined) t.equal(header.elements, tool.elements, `${c.name}: elements = Number of entries`);
    t.same(fieldsOf(`${c.type} ${tool.header}`), fieldsOf(line), `${c.name}: list -t Header agrees with save`);
    const { entries, ...listed } = await ipset.list(c.name);
    t.same({ ...listed, memSize: header.memSize }, header, `${c.name}: list() has the same header`);
    t.equal(entries.length, tool.elements, `${c.name}: ${tool.elements} entries`);
  }
});

t.test('forceadd: the tool adds to a full set that create() made with it, not to one without', async (t) => {
  const ns = await freshNetns(t, 'ipset');
  const ipset = await open(t, ns);
  // forceadd evicts from the new element's bucket, so only an occupied
  // bucket takes it: 256 elements in 64 buckets leave few empty, and a fixed
  // initval makes which ones deterministic.
  const options = { hashSize: 64, maxElem: 256, initval: 0x5eed };
  await ipset.create('f', 'hash:ip', { ...options, forceadd: true });
  await ipset.create('n', 'hash:ip', options);
  t.match(await ipset.header('f'), { forceadd: true, maxElem: 256 });
  t.match(await ipset.header('n'), { forceadd: false });
  const fill = Array.from({ length: 256 }, (_, i) => `10.0.${i >> 8}.${i & 255}`);
  t.equal(await ipset.addMany('f', fill), 256);
  t.equal(await ipset.addMany('n', fill), 256);
  let taken = 0;
  for (let i = 1; i <= 10; i++) {
    if ((await ns.tryExec('ipset', ['add', 'f', `10.9.0.${i}`])).code === 0) taken++;
    const refused = await ns.tryExec('ipset', ['add', 'n', `10.9.0.${i}`]);
    if (refused.code === 0 || !/Hash is full/.test(refused.stderr)) t.fail(`the full set without forceadd took 10.9.0.${i}`);
  }
  t.ok(taken > 0, `forceadd: the full set took ${taken} of 10 new elements`);
  t.equal((await toolHeader(ns, 'f')).elements, 256, 'by evicting others');
  // replace() keeps forceadd (it copies the header's options to its temporary set).
  await ipset.replace('f', ['10.1.0.1', '10.1.0.2']);
  t.match(await ipset.header('f'), { forceadd: true, maxElem: 256, hashSize: 64, initval: 0x5eed, elements: 2 });
});

const everyType: Array<[SetType, CreateOptions, string]> = [
  ['hash:ip', {}, 'hash:ip'],
  ['hash:ip', { family: 'inet6' }, 'hash:ip family inet6'],
  ['hash:ip,port', {}, 'hash:ip,port'],
  ['hash:ip,port,ip', {}, 'hash:ip,port,ip'],
  ['hash:ip,port,net', {}, 'hash:ip,port,net'],
  ['hash:net', {}, 'hash:net'],
  ['hash:net,port', {}, 'hash:net,port'],
  ['hash:net,iface', {}, 'hash:net,iface'],
  ['bitmap:ip', { range: '10.0.0.0/24' }, 'bitmap:ip range 10.0.0.0/24'],
  ['bitmap:port', { range: '0-1000' }, 'bitmap:port range 0-1000'],
  ['list:set', {}, 'list:set'],
];

t.test('revision: header() and list() report the Revision: line of ipset list -t, for every type', async (t) => {
  const ns = await freshNetns(t, 'ipset');
  const ipset = await open(t, ns);
  const names: string[] = [];
  for (const [i, [type, options, tool]] of everyType.entries()) {
    await ipset.create(`ours${i}`, type, options);
    await ns.exec('ipset', ['create', `tool${i}`, ...tool.split(' ')]);
    names.push(`ours${i}`, `tool${i}`);
  }
  for (const name of names) {
    const tool = await toolHeader(ns, name);
    const h = await ipset.header(name);
    t.equal(h.revision, tool.revision, `${name} (${tool.type}): revision ${tool.revision}`);
    t.equal((await ipset.list(name)).revision, tool.revision, `${name}: list() too`);
  }
  // And we create at the revision the tool creates at (the kernel's newest
  // that both know), which is where bucketsize and initval work.
  for (let i = 0; i < everyType.length; i++)
    t.equal((await ipset.header(`ours${i}`)).revision, (await toolHeader(ns, `tool${i}`)).revision, `${everyType[i][2]}: same revision as the tool's`);
});
