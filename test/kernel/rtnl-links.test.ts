/**
 * Links and addresses through rtnetlink, cross-checked with `ip` both ways:
 * what the library creates, `ip` shows; what `ip` creates, the library reads.
 */
import t from 'tap';
import { Rtnl } from '../../lib/index.js';
import { freshNetns } from '../support/netns.js';

/** `ip -o addr show dev X` as "addr/len" strings, sorted, without link-local. */
async function ipAddrs(ns: { exec(f: string, a: string[]): Promise<string> }, dev: string): Promise<string[]> {
  const out = await ns.exec('ip', ['-o', 'addr', 'show', 'dev', dev]);
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => l.trim().split(/\s+/)[3])
    .filter((a) => !a.startsWith('fe80:'))
    .sort();
}

t.test('ensureDummyLink creates kube-ipvs0 as ip shows it, and is idempotent', async (t) => {
  const ns = await freshNetns(t);
  const rt = await Rtnl.open({ netns: ns.path });
  t.teardown(() => rt.close());
  t.equal(await rt.getLink('kube-ipvs0'), undefined, 'absent at first');
  const link = await rt.ensureDummyLink('kube-ipvs0');
  t.match(link, { name: 'kube-ipvs0', kind: 'dummy', up: true });
  const shown = await ns.exec('ip', ['-d', '-o', 'link', 'show', 'kube-ipvs0']);
  t.match(shown, new RegExp(`^${link.index}: kube-ipvs0: <[^>]*UP[^>]*>`));
  t.match(shown, /\bdummy\b/);
  t.same(await rt.ensureDummyLink('kube-ipvs0'), link, 'a second call changes nothing');
  await rt.deleteLink('kube-ipvs0');
  t.equal((await ns.tryExec('ip', ['link', 'show', 'kube-ipvs0'])).code, 1, 'ip no longer sees it');
  await rt.deleteLink('kube-ipvs0');
  t.pass('deleting a missing link is not an error');
});

t.test('a link of that name that is not dummy is reported, not reused', async (t) => {
  const ns = await freshNetns(t);
  await ns.exec('ip', ['link', 'add', 'kube-ipvs0', 'type', 'veth', 'peer', 'name', 'other0']);
  const rt = await Rtnl.open({ netns: ns.path });
  t.teardown(() => rt.close());
  await t.rejects(rt.ensureDummyLink('kube-ipvs0'), /is a veth link, not dummy/);
});

t.test('addresses written by the library are what ip shows, and back', async (t) => {
  const ns = await freshNetns(t);
  const rt = await Rtnl.open({ netns: ns.path });
  t.teardown(() => rt.close());
  await rt.ensureDummyLink('kube-ipvs0');
  const wanted = ['10.96.0.10', '10.96.0.11', '192.0.2.0/24', 'fd00:96::10', '2001:db8::1/64'];
  const res = await rt.addAddresses('kube-ipvs0', wanted);
  t.same(res.map((r) => r.ok), [true, true, true, true, true]);
  t.same(await ipAddrs(ns, 'kube-ipvs0'), ['10.96.0.10/32', '10.96.0.11/32', '192.0.2.0/24', '2001:db8::1/64', 'fd00:96::10/128'].sort());

  // Written by ip, read by the library field for field.
  await ns.exec('ip', ['addr', 'add', '10.96.0.99/32', 'dev', 'kube-ipvs0']);
  const listed = await rt.listAddresses('kube-ipvs0');
  const ours = listed.map((a) => `${a.address}/${a.prefixLength}`).filter((a) => !a.startsWith('fe80:')).sort();
  t.same(ours, await ipAddrs(ns, 'kube-ipvs0'));
  t.match(listed.find((a) => a.address === '10.96.0.99'), { family: 'inet', prefixLength: 32, link: 'kube-ipvs0' });

  // Adding one that exists fails alone; the others in the call are applied.
  const again = await rt.addAddresses('kube-ipvs0', ['10.96.0.10', '10.96.0.12']);
  t.equal(again[0].ok, false);
  t.equal(!again[0].ok && again[0].error.code, 'EEXIST');
  t.equal(again[1].ok, true);

  const del = await rt.deleteAddresses('kube-ipvs0', ['10.96.0.10', 'fd00:96::10', '10.96.0.250']);
  t.same(del.map((r) => r.ok), [true, true, false]);
  t.equal(!del[2].ok && del[2].error.code, 'EADDRNOTAVAIL');
  t.same(await ipAddrs(ns, 'kube-ipvs0'), ['10.96.0.11/32', '10.96.0.12/32', '10.96.0.99/32', '192.0.2.0/24', '2001:db8::1/64'].sort());
});

t.test('bad input names the field and sends nothing', async (t) => {
  const ns = await freshNetns(t);
  const rt = await Rtnl.open({ netns: ns.path });
  t.teardown(() => rt.close());
  await rt.ensureDummyLink('kube-ipvs0');
  const before = await ipAddrs(ns, 'kube-ipvs0');
  await t.rejects(rt.addAddresses('kube-ipvs0', ['10.0.0.1', '10.0.0.300']), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', field: 'addresses[1]', message: /^addresses\[1\] must be/ });
  await t.rejects(rt.addAddresses('kube-ipvs0', ['10.0.0.1/33']), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', field: 'addresses[0]', message: /prefix length from 1 to 32/ });
  await t.rejects(rt.ensureDummyLink('a-name-that-is-too-long'), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', field: 'name' });
  await t.rejects(rt.addAddresses('nope0', ['10.0.0.1']), { name: 'NetlinkError', code: 'ENODEV', subject: 'nope0', message: /no link named nope0/ });
  t.same(await ipAddrs(ns, 'kube-ipvs0'), before, 'nothing was added');
});
