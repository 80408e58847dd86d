// Set administration against the kernel: protocol, exist semantics, error
// codes, rename/swap, atomic replace under a concurrent reader, list:set
// membership, concurrent callers and close().
import t from 'tap';

import { Ipset, IpsetError } from '../../lib/ipset/index.js';
import { NetlinkError } from '../../lib/netlink/errors.js';
import { freshNetns } from '../support/netns.js';

async function setup(t: { teardown(fn: () => unknown): void }) {
  const ns = await freshNetns(t, 'ipset');
  const ipset = await Ipset.open({ netns: ns.path });
  t.teardown(() => ipset.close());
  return { ns, ipset };
}

t.test('protocol()', async (t) => {
  const { ipset } = await setup(t);
  t.same(ipset.protocol(), { version: 7, min: 6 });
});

t.test('exist semantics', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('s', 'hash:ip', { timeout: 100 });
  await t.rejects(ipset.create('s', 'hash:ip', { timeout: 100 }), { code: 'EEXIST', errno: 17 });
  await ipset.create('s', 'hash:ip', { timeout: 100, exist: true });
  await t.rejects(ipset.create('s', 'hash:net', { exist: true }), { code: 'EEXIST' }, 'exist does not hide a different set');
  await ipset.add('s', '10.0.0.1', { timeout: 50 });
  await t.rejects(ipset.add('s', '10.0.0.1'), { code: 'IPSET_ERR_EXIST', errno: 4103, message: /already in the set/ });
  await ipset.add('s', '10.0.0.1', { exist: true, timeout: 90 });
  t.match((await ipset.list('s')).entries, [/^10\.0\.0\.1 timeout (89|90)$/], 'exist refreshed the timeout');
  t.equal(await ipset.test('s', '10.0.0.1'), true);
  t.equal(await ipset.test('s', '10.0.0.2'), false);
  await ipset.del('s', '10.0.0.1');
  await t.rejects(ipset.del('s', '10.0.0.1'), { code: 'IPSET_ERR_EXIST', message: /not in the set/ });
  await ipset.del('s', '10.0.0.1', { exist: true });
  t.equal((await ns.exec('ipset', ['save', 's'])).split('\n').filter((l) => l.startsWith('add')).length, 0);
});

t.test('errors', async (t) => {
  const { ns, ipset } = await setup(t);
  await t.rejects(ipset.list('missing'), { code: 'ENOENT', errno: 2, message: /does not exist/ });
  await t.rejects(ipset.add('missing', '10.0.0.1'), { code: 'ENOENT' });
  await t.rejects(ipset.destroy('missing'), { code: 'ENOENT' });
  const missing: unknown = await ipset.header('missing').catch((e: unknown) => e);
  t.ok(missing instanceof IpsetError && missing instanceof NetlinkError, 'an IpsetError, which is a NetlinkError');
  t.match(missing, { code: 'ENOENT', set: 'missing', meaning: 'the set does not exist' });
  await ipset.create('a', 'hash:ip');
  await ipset.create('b', 'hash:net');
  await t.rejects(ipset.rename('a', 'b'), { code: 'IPSET_ERR_EXIST_SETNAME2', message: /new name already exists/ });
  await t.rejects(ipset.swap('a', 'b'), { code: 'IPSET_ERR_TYPE_MISMATCH' });
  await t.rejects(ipset.swap('a', 'missing'), { code: 'IPSET_ERR_EXIST_SETNAME2' });
  await ipset.create('l', 'list:set');
  await ipset.add('l', 'a');
  await t.rejects(ipset.destroy('a'), { code: 'IPSET_ERR_BUSY' });
  await t.rejects(ipset.add('l', 'missing'), { code: 'IPSET_ERR_NAME', message: /member set does not exist/ });
  await t.rejects(ipset.add('l', 'l'), { code: 'IPSET_ERR_LOOP' });
  await ipset.create('bm', 'bitmap:port', { range: '1000-2000' });
  await t.rejects(ipset.add('bm', '80'), { code: 'IPSET_ERR_BITMAP_RANGE', message: /outside the range/ });
  // Invalid arguments never reach the kernel: counters() shows no system call.
  const refused = async (call: () => Promise<unknown>, expected: typeof Error | { name: string; code?: string; message?: RegExp }) => {
    await ipset.test('a', '10.0.0.1'); // entries are parsed against a's type: the handle knows it
    const before = ipset.counters();
    await t.rejects(call(), expected);
    t.same(ipset.counters(), before, 'nothing sent');
  };
  await refused(() => ipset.create('', 'hash:ip'), TypeError);
  await refused(() => ipset.create('x'.repeat(32), 'hash:ip'), RangeError);
  await refused(() => ipset.create('c', 'hash:foo' as never), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' });
  await refused(() => ipset.create('c', 'hash:ip', { range: '1-2' }), { name: 'TypeError', message: /range applies to bitmap/ });
  await refused(() => ipset.create('c', 'bitmap:port'), { name: 'TypeError', message: /range is required/ });
  await refused(() => ipset.add('a', '10.0.0.1', { timeout: 5 }), { name: 'TypeError', message: /timeout/ });
  await refused(() => ipset.add('a', '10.0.0.1', { comment: 'x' }), { name: 'TypeError', message: /comment/ });
  t.same((await ns.exec('ipset', ['list', '-n'])).trim().split('\n').sort(), ['a', 'b', 'bm', 'l']);
});

t.test('rename, swap, flush, destroy, listNames', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('a', 'hash:ip');
  await ipset.add('a', '10.0.0.1');
  await ipset.rename('a', 'renamed');
  t.same(await ipset.listNames(), ['renamed']);
  await ipset.add('renamed', '10.0.0.2');
  await ipset.create('b', 'hash:ip');
  await ipset.add('b', '10.9.9.9');
  await ipset.swap('renamed', 'b');
  t.same((await ipset.list('b')).entries.sort(), ['10.0.0.1', '10.0.0.2']);
  t.same((await ipset.list('renamed')).entries, ['10.9.9.9']);
  t.match(await ns.exec('ipset', ['save', 'b']), /add b 10\.0\.0\.1/);
  await ipset.flush('b');
  t.same((await ipset.list('b')).entries, []);
  await ipset.flush();
  t.same((await ipset.list('renamed')).entries, []);
  await ipset.destroy('b');
  t.same(await ipset.listNames(), ['renamed']);
  await ipset.destroy();
  t.same(await ipset.listNames(), []);
});

t.test('list:set membership', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('m1', 'hash:ip');
  await ipset.create('m2', 'hash:net', { family: 'inet6' });
  await ipset.create('l', 'list:set', { size: 4 });
  await ipset.add('l', 'm1');
  await ipset.add('l', { name: 'm2' });
  t.same((await ipset.list('l')).entries, ['m1', 'm2']);
  t.equal(await ipset.test('l', 'm2'), true);
  t.equal((await ipset.header('m1')).references, 1, 'the member is referenced');
  t.match(await ns.exec('ipset', ['save', 'l']), /add l m1\nadd l m2/);
  await ipset.del('l', 'm1');
  t.same((await ipset.list('l')).entries, ['m2']);
  t.match(await ipset.header('l'), { type: 'list:set', size: 4 });
});

t.test('replace is atomic for a concurrent reader', async (t) => {
  const { ns, ipset } = await setup(t);
  const A = Array.from({ length: 20_000 }, (_, i) => `10.1.${i >> 8}.${i & 255}`);
  const B = Array.from({ length: 20_000 }, (_, i) => `10.2.${i >> 8}.${i & 255}`);
  t.equal(await ipset.replace('s', A, { type: 'hash:ip', maxElem: 65536 }), 20_000, 'creates the set when missing');
  const reader = await Ipset.open({ netns: ns.path });
  t.teardown(() => reader.close());
  let stop = false;
  const seen: string[] = [];
  const readLoop = (async () => {
    while (!stop) {
      const l = await reader.list('s');
      const prefixes = new Set(l.entries.map((e) => e.slice(0, 5)));
      seen.push(`${l.entries.length}:${[...prefixes].join('+')}`);
    }
  })();
  const toolLoop = (async () => {
    let n = 0;
    while (!stop && n++ < 20) {
      const out = await ns.exec('ipset', ['save', 's']);
      const adds = out.split('\n').filter((x) => x.startsWith('add '));
      const prefixes = new Set(adds.map((x) => x.slice(6, 11)));
      seen.push(`${adds.length}:${[...prefixes].join('+')}`);
    }
  })();
  try {
    for (let i = 0; i < 3; i++) await ipset.replace('s', i % 2 === 0 ? B : A);
  } finally {
    stop = true;
    await Promise.all([readLoop, toolLoop]);
  }
  t.ok(seen.length > 3, `${seen.length} reads during 3 replaces`);
  t.same([...new Set(seen)].sort().filter((x) => x !== '20000:10.1.' && x !== '20000:10.2.'), [], 'every read saw all-old or all-new');
  t.same(await ipset.listNames(), ['s'], 'no temporary set left behind');
  t.match(await ipset.header('s'), { maxElem: 65536 }, 'settings kept');
  await t.rejects(ipset.replace('nope', A), { code: 'ENOENT' }, 'without a spec the set must exist');
});

t.test('many concurrent callers on one handle', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('c', 'hash:ip,port');
  const ops: Promise<unknown>[] = [];
  for (let i = 0; i < 100; i++) {
    ops.push(ipset.add('c', `10.0.0.${i},tcp:${i + 1}`));
    if (i % 10 === 0) ops.push(ipset.list('c'), ipset.listNames(), ipset.test('c', '10.0.0.0,tcp:1'));
  }
  ops.push(ipset.addMany('c', Array.from({ length: 1000 }, (_, i) => `10.1.${i >> 8}.${i & 255},udp:53`)));
  await Promise.all(ops);
  t.equal((await ipset.list('c')).entries.length, 1100);
  t.match(await ns.exec('ipset', ['list', '-t', 'c']), /Number of entries: 1100/);
});

t.test('close() is idempotent; later calls reject', async (t) => {
  const { ipset } = await setup(t);
  ipset.close();
  ipset.close();
  await t.rejects(ipset.listNames(), { code: 'EBADF', message: /closed/ });
  await t.rejects(ipset.add('x', '10.0.0.1'), { code: 'EBADF' });
});

t.test('open() in a namespace that does not exist fails clearly', async (t) => {
  await t.rejects(Ipset.open({ netns: '/run/netns/does-not-exist-ipset' }), { code: 'ENOENT', message: /network namespace/ });
});
