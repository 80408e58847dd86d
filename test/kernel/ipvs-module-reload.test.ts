/**
 * IPVS unloaded under the library:
 *  - with no IPVS in the kernel, Ipvs.open() fails with an error that says
 *    so and says what to do;
 *  - unloaded and loaded again under an open handle: genetlink gives the
 *    family a new id (ids are allocated cyclically), so requests sent with
 *    the old one fail with ENOENT from genetlink itself. The handle resolves
 *    the family again and resends exactly those requests: callers see
 *    nothing.
 * Both unload ip_vs, so they run in the sandbox kernel (or where
 * IPVS_NETLINK_UNLOAD_MODULES=1 allows it): never on a real node by accident.
 */
import t from 'tap';
import { readdirSync } from 'node:fs';
import { Ipvs, NetlinkError } from '../../lib/index.js';
import { freshNetns } from '../support/netns.js';
import { isIpvsModule, loadedModules, modprobe, moduleUnloadSkip, unloadModules } from '../support/ipvs-env.js';

const skip = moduleUnloadSkip();

/** Unloads ip_vs and everything using it; loads them again when the test ends. */
async function withoutIpvs(t: { teardown(fn: () => unknown): void; ok(v: unknown, m: string): void }): Promise<string[]> {
  const before = loadedModules(isIpvsModule);
  t.ok(before.includes('ip_vs'), 'IPVS is a module here');
  t.teardown(() => modprobe(['-a', ...before]).catch(() => undefined));
  // Every user of ip_vs first, then ip_vs itself.
  await unloadModules([...before.filter((m) => m !== 'ip_vs'), 'ip_vs']);
  return before;
}

t.test('Ipvs.open() in a kernel without IPVS says so, and what to do', { skip }, async (t) => {
  const before = await withoutIpvs(t);
  t.same(loadedModules(isIpvsModule), [], 'no IPVS module is loaded');
  t.same(readdirSync('/proc/net').includes('ip_vs'), false, 'and /proc/net/ip_vs is gone');
  const ns = await freshNetns(t);
  const err = await Ipvs.open({ netns: ns.path }).then(
    (h) => {
      h.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  t.type(err, NetlinkError);
  t.match(err, {
    code: 'EPROTONOSUPPORT',
    operation: 'Ipvs.open',
    message: /this kernel has no IPVS: the generic netlink family "IPVS" is not registered\. Load the module \(modprobe ip_vs\)/,
  });
  await modprobe(['-a', ...before]);
  const ipvs = await Ipvs.open({ netns: ns.path });
  t.teardown(() => ipvs.close());
  t.same(await ipvs.listServices(), [], 'with the module back, open() works');
});

t.test('a module reload under an open handle is recovered transparently', { skip }, async (t) => {
  const ns = await freshNetns(t);
  const ipvs = await Ipvs.open({ netns: ns.path });
  t.teardown(() => ipvs.close());
  await ipvs.addService({ protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr' });
  await ipvs.flush();
  // The handle's native half, to see which family id it talks to.
  const familyId = () => (ipvs as unknown as { handle: { familyId(): number } }).handle.familyId();
  const idBefore = familyId();

  const before = await withoutIpvs(t);
  t.notOk(loadedModules(isIpvsModule).includes('ip_vs'), 'ip_vs is unloaded');
  t.same(readdirSync('/proc/net').includes('ip_vs'), false);
  await modprobe(['-a', ...before]);

  await ipvs.addService({ protocol: 'tcp', address: '10.0.0.2', port: 80, scheduler: 'rr' });
  t.equal((await ns.exec('ipvsadm', ['-Sn'])).trim(), '-A -t 10.0.0.2:80 -s rr', 'the request after the reload was applied');
  t.match(await ipvs.listServices(), [{ address: '10.0.0.2' }]);
  t.not(familyId(), idBefore, 'the family came back under a new id, which the handle resolved');
});
