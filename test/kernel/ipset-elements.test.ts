// Single elements with their options, and sets other programs change:
//  - add() with the option object (timeout, comment, nomatch, packets and
//    bytes, skbinfo), string and structured entries: `ipset save` prints
//    exactly what the tool prints for the same `ipset add` commands;
//  - rename and swap done by the ipset tool: the library reads the result
//    back (names, entries, headers) and keeps working on the sets.
import t from 'tap';

import { Ipset, type AddOptions, type Entry } from '../../lib/ipset/index.js';
import { sameTimedLines, timed, toolEntries, type Span } from '../support/ipset-tool.js';
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
  [{ ip: '10.0.5.0', cidr: 24, nomatch: true, comment: 'both' }, { timeout: 70 }, '10.0.5.0/24 timeout 70 nomatch comment both'],
];

t.test('add() with options: ipset save prints what it prints for the same ipset add', async (t) => {
  const { ns, ipset } = await setup(t);
  const tools = await freshNetns(t, 'ipset');
  const create = 'hash:net timeout 600 counters comment skbinfo';
  await ipset.create('s', 'hash:net', { timeout: 600, counters: true, comment: true, skbinfo: true });
  await tools.exec('ipset', ['create', 's', ...create.split(' ')]);
  // Each side's adds timed: a remaining timeout is judged by when its own
  // element went in and when it was read, not against the other side's.
  const ourAdds: Span[] = [];
  const toolAdds: Span[] = [];
  for (const [entry, options, tool] of adds) {
    ourAdds.push((await timed(() => ipset.add('s', entry, options)))[1]);
    toolAdds.push((await timed(() => tools.exec('ipset', ['restore'], `add s ${tool}\n`)))[1]);
  }
  const [ours, ourRead] = await timed(() => saved(ns, 's'));
  const [theirs, toolRead] = await timed(() => saved(tools, 's'));
  // In the order of `adds` (which is the sorted order).
  const wanted = [
    '10.0.0.0/24 timeout 100 packets 5 bytes 500 comment "web tier"',
    '10.0.1.0/24 timeout 600 nomatch packets 0 bytes 0',
    '10.0.2.0/24 timeout 50 packets 1 bytes 2 comment "obj" skbmark 0x10/0xff skbprio 1:2 skbqueue 3',
    '10.0.3.0/24 timeout 0 packets 0 bytes 0',
    '10.0.4.0/24 timeout 600 packets 9007199254740991 bytes 0 skbmark 0x5',
    '10.0.5.0/24 timeout 70 nomatch packets 0 bytes 0 comment "both"',
  ];
  sameTimedLines(t, theirs, wanted, toolAdds, toolRead, 'the tool wrote');
  sameTimedLines(t, ours, wanted, ourAdds, ourRead, 'the library wrote the same lines as the tool');
  const [listed, listRead] = await timed(async () => (await ipset.list('s')).entries.sort());
  sameTimedLines(t, listed, wanted, ourAdds, listRead, 'list() returns the same lines');

  // exist: an element already there is updated in place, options and all.
  const [, replaced] = await timed(() => ipset.add('s', '10.0.0.0/24', { exist: true, timeout: 300, comment: 'changed', packets: 1, bytes: 1 }));
  const [after, afterRead] = await timed(() => saved(ns, 's'));
  sameTimedLines(t, after.filter((l) => l.startsWith('10.0.0.0/24')), ['10.0.0.0/24 timeout 300 packets 1 bytes 1 comment "changed"'], replaced, afterRead, 'exist replaced the options');
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
  const [, addedToA] = await timed(() => ipset.addMany('a', ['10.0.0.1', '10.0.0.2']));
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
  const withTimeout = ['10.0.0.1 timeout 100', '10.0.0.2 timeout 100'];
  const [listed, listRead] = await timed(async () => (await ipset.list('b')).entries.sort());
  sameTimedLines(t, listed, withTimeout, addedToA, listRead, 'list() after the swap');
  const [savedB, saveRead] = await timed(() => saved(ns, 'b'));
  sameTimedLines(t, savedB, withTimeout, addedToA, saveRead, 'ipset save after the swap');

  // The handle remembered b without timeout support: an element with a
  // timeout is first refused by our own check (saying why, sending
  // nothing), then the set is looked up afresh.
  const before = ipset.counters().messagesSent;
  await t.rejects(ipset.add('b', '10.0.0.3', { timeout: 50 }), {
    name: 'TypeError',
    message: /timeout .*\(as set b was when this handle last looked: hash:ip inet; if it has been re-created since, call again: it is looked up afresh\)$/,
  });
  t.equal(ipset.counters().messagesSent, before, 'nothing was sent');
  const [, added] = await timed(() => ipset.add('b', '10.0.0.3', { timeout: 50 }));
  const [b, read] = await timed(() => saved(ns, 'b'));
  t.match(b, [/^10\.0\.0\.1 timeout \d+$/, /^10\.0\.0\.2 timeout \d+$/, /^10\.0\.0\.3 timeout \d+$/]);
  sameTimedLines(t, b.slice(2), ['10.0.0.3 timeout 50'], added, read, 'the element the handle added once it looked again');
  // Re-created by the tool with another type under a known name.
  await ipset.addMany('c', ['10.1.1.1']); // the handle now knows c as hash:ip
  await ns.exec('ipset', ['destroy', 'c']);
  await ns.exec('ipset', ['create', 'c', 'hash:ip,port']);
  await t.rejects(ipset.addMany('c', ['10.0.0.1,tcp:80']), { name: 'TypeError', message: /as set c was when this handle last looked: hash:ip inet;/ });
  t.equal(await ipset.addMany('c', ['10.0.0.1,tcp:80']), 1, 'the next call sees the new set');
  t.same(await saved(ns, 'c'), ['10.0.0.1,tcp:80']);
});

t.test('IPv6 addresses that carry an IPv4 one: ::a.b.c.d (IPv4-compatible) is not ::ffff:a.b.c.d (IPv4-mapped)', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('v6', 'hash:ip', { family: 'inet6' });
  await ipset.addMany('v6', ['::10.0.0.1', '::ffff:10.0.0.2', '::0:10.0.0.3']);
  t.same(await saved(ns, 'v6'), ['::10.0.0.1', '::10.0.0.3', '::ffff:10.0.0.2'], 'ipset save: each as written, none turned into another');
  await ns.exec('ipset', ['add', 'v6', '::10.0.0.4']);
  t.same((await ipset.list('v6')).entries.sort(), ['::10.0.0.1', '::10.0.0.3', '::10.0.0.4', '::ffff:10.0.0.2'], 'list() reads them back as the tool prints them, the one the tool added too');
  await ipset.delMany('v6', ['::10.0.0.4']);
  t.notOk((await saved(ns, 'v6')).includes('::10.0.0.4'), 'and deletes the one the tool added by the same spelling');
});
