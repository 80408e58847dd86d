// Single elements with their options, and sets other programs change:
//  - add() with the option object (timeout, comment, nomatch, packets and
//    bytes, skbinfo), string and structured entries: `ipset save` prints
//    exactly what the tool prints for the same `ipset add` commands;
//  - rename and swap done by the ipset tool: the library reads the result
//    back (names, entries, headers) and keeps working on the sets.
import t from 'tap';

import { Ipset, type AddOptions, type Entry } from '../../lib/ipset/index.js';
import { sameLines, toolEntries } from '../support/ipset-tool.js';
import { freshNetns } from '../support/netns.js';

const saved = toolEntries;

async function setup(t: { teardown(fn: () => unknown): void }) {
  const ns = await freshNetns(t, 'ipset');
  const ipset = await Ipset.open({ netns: ns.path });
  t.teardown(() => ipset.close());
  return { ns, ipset };
}

// What we call, and the `ipset add` arguments the tool gets for the same element.
const adds: Array<[Entry, AddOptions | undefined, string]> = [
  ['10.0.0.0/24', { timeout: 100, comment: 'web tier', packets: 5, bytes: 500 }, '10.0.0.0/24 timeout 100 comment "web tier" packets 5 bytes 500'],
  ['10.0.1.0/24', { nomatch: true }, '10.0.1.0/24 nomatch'],
  [
    { ip: '10.0.2.0', cidr: 24, timeout: 50, comment: 'obj', packets: 1n, bytes: 2n, skbmark: [0x10, 0xff], skbprio: '1:2', skbqueue: 3 },
    undefined,
    '10.0.2.0/24 timeout 50 packets 1 bytes 2 comment obj skbmark 0x10/0xff skbprio 1:2 skbqueue 3',
  ],
  ['10.0.3.0/24', { timeout: 0 }, '10.0.3.0/24 timeout 0'],
  ['10.0.4.0/24', { skbmark: 5, packets: 9007199254740991 }, '10.0.4.0/24 skbmark 0x5 packets 9007199254740991'],
  [{ ip: '10.0.5.0', cidr: 24, nomatch: true, comment: 'both' }, { timeout: 7 }, '10.0.5.0/24 timeout 7 nomatch comment both'],
];

t.test('add() with options: ipset save prints what it prints for the same ipset add', async (t) => {
  const { ns, ipset } = await setup(t);
  const tools = await freshNetns(t, 'ipset');
  const create = 'hash:net timeout 600 counters comment skbinfo';
  await ipset.create('s', 'hash:net', { timeout: 600, counters: true, comment: true, skbinfo: true });
  await tools.exec('ipset', ['create', 's', ...create.split(' ')]);
  for (const [entry, options, tool] of adds) {
    await ipset.add('s', entry, options);
    await tools.exec('ipset', ['restore'], `add s ${tool}\n`);
  }
  const ours = await saved(ns, 's');
  sameLines(t, ours, await saved(tools, 's'), 'the same lines as the tool wrote');
  sameLines(t, ours, [
    '10.0.0.0/24 timeout 100 packets 5 bytes 500 comment "web tier"',
    '10.0.1.0/24 timeout 600 nomatch packets 0 bytes 0',
    '10.0.2.0/24 timeout 50 packets 1 bytes 2 comment "obj" skbmark 0x10/0xff skbprio 1:2 skbqueue 3',
    '10.0.3.0/24 timeout 0 packets 0 bytes 0',
    '10.0.4.0/24 timeout 600 packets 9007199254740991 bytes 0 skbmark 0x5',
    '10.0.5.0/24 timeout 7 nomatch packets 0 bytes 0 comment "both"',
  ], 'as expected');
  sameLines(t, (await ipset.list('s')).entries.sort(), ours, 'list() returns the same lines');

  // exist: an element already there is updated in place, options and all.
  await ipset.add('s', '10.0.0.0/24', { exist: true, timeout: 300, comment: 'changed', packets: 1, bytes: 1 });
  sameLines(t, (await saved(ns, 's')).filter((l) => l.startsWith('10.0.0.0/24')), ['10.0.0.0/24 timeout 300 packets 1 bytes 1 comment "changed"'], 'exist replaced the options');
  await t.rejects(ipset.add('s', '10.0.0.0/24', { comment: 'again' }), { code: 'IPSET_ERR_EXIST' }, 'without exist: refused');
  // nomatch elements: test() says they do not match, as the tool's test does.
  t.equal(await ipset.test('s', '10.0.1.5'), false, 'an address in a nomatch net does not match');
  t.not((await ns.tryExec('ipset', ['test', 's', '10.0.1.5'])).code, 0, 'nor for the tool');
  t.equal(await ipset.test('s', '10.0.3.5'), true);
});

t.test('rename and swap by the ipset tool: the library reads the result and keeps working', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('a', 'hash:ip', { timeout: 100 });
  await ipset.create('b', 'hash:ip');
  await ipset.addMany('a', ['10.0.0.1', '10.0.0.2']);
  await ipset.addMany('b', ['10.9.9.9']); // the handle now knows both sets

  await ns.exec('ipset', ['rename', 'a', 'c']);
  t.same((await ipset.listNames()).sort(), ['b', 'c'], 'listNames() sees the new name');
  t.match(await ipset.header('c'), { name: 'c', type: 'hash:ip', timeout: 100 });
  t.same((await ipset.list('c')).entries.map((e) => e.replace(/ timeout \d+/, '')).sort(), ['10.0.0.1', '10.0.0.2']);
  await t.rejects(ipset.add('a', '10.0.0.3'), { code: 'ENOENT' }, 'the old name is gone');

  // Swap exchanges contents and settings (timeout) under the two names.
  await ns.exec('ipset', ['swap', 'b', 'c']);
  t.same((await ipset.list('b')).entries.map((e) => e.replace(/ timeout \d+/, '')).sort(), ['10.0.0.1', '10.0.0.2'], 'b has what c had');
  t.same((await ipset.list('c')).entries, ['10.9.9.9'], 'c has what b had');
  t.match(await ipset.header('b'), { timeout: 100 });
  t.equal((await ipset.header('c')).timeout, undefined);
  sameLines(t, (await ipset.list('b')).entries.sort(), await saved(ns, 'b'), 'list() = ipset save after the swap');

  // The handle remembered b without timeout support: an element with a
  // timeout is first refused by our own check (saying why, sending
  // nothing), then the set is looked up afresh.
  const before = ipset.counters().messagesSent;
  await t.rejects(ipset.add('b', '10.0.0.3', { timeout: 5 }), {
    name: 'TypeError',
    message: /timeout .*\(as set b was when this handle last looked: hash:ip inet; if it has been re-created since, call again: it is looked up afresh\)$/,
  });
  t.equal(ipset.counters().messagesSent, before, 'nothing was sent');
  await ipset.add('b', '10.0.0.3', { timeout: 5 });
  t.match(await saved(ns, 'b'), [/^10\.0\.0\.1 timeout \d+$/, /^10\.0\.0\.2 timeout \d+$/, /^10\.0\.0\.3 timeout [45]$/]);
  // Re-created by the tool with another type under a known name.
  await ipset.addMany('c', ['10.1.1.1']); // the handle now knows c as hash:ip
  await ns.exec('ipset', ['destroy', 'c']);
  await ns.exec('ipset', ['create', 'c', 'hash:ip,port']);
  await t.rejects(ipset.addMany('c', ['10.0.0.1,tcp:80']), { name: 'TypeError', message: /as set c was when this handle last looked: hash:ip inet;/ });
  t.equal(await ipset.addMany('c', ['10.0.0.1,tcp:80']), 1, 'the next call sees the new set');
  t.same(await saved(ns, 'c'), ['10.0.0.1,tcp:80']);
});
