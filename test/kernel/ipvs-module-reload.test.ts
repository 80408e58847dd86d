/**
 * IPVS unloaded and loaded again under an open handle: genetlink gives the
 * family a new id (ids are allocated cyclically), so requests sent with the
 * old one fail with ENOENT from genetlink itself. The handle resolves the
 * family again and resends exactly those requests: callers see nothing.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readdirSync } from 'node:fs';
import { Ipvs } from '../../lib/index.js';
import { freshNetns } from '../support/netns.js';

const run = promisify(execFile);
// Inside the sandbox the modules live under the tree run.sh links there.
const modprobe = (args: string[]) =>
  run('modprobe', process.env.IPVS_NETLINK_KERNEL === 'sandbox' ? ['-d', '/run/sandbox-modroot', ...args] : args);

async function loadedIpvsModules(): Promise<string[]> {
  const { stdout } = await run('cat', ['/proc/modules']);
  return stdout.split('\n').map((l) => l.split(' ')[0]).filter((m) => m === 'ip_vs' || m.startsWith('ip_vs_') || m === 'xt_ipvs');
}

t.test('a module reload under an open handle is recovered transparently', async (t) => {
  const before = await loadedIpvsModules();
  t.ok(before.includes('ip_vs'), 'IPVS is a module here');
  t.teardown(() => modprobe(['-a', ...before]).catch(() => undefined));

  const ns = await freshNetns(t);
  const ipvs = await Ipvs.open({ netns: ns.path });
  t.teardown(() => ipvs.close());
  await ipvs.addService({ protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr' });
  await ipvs.flush();
  // The handle's native half, to see which family id it talks to.
  const familyId = () => (ipvs as unknown as { handle: { familyId(): number } }).handle.familyId();
  const idBefore = familyId();

  // Every user of ip_vs first, then ip_vs itself.
  await modprobe(['-r', '-a', ...before.filter((m) => m !== 'ip_vs'), 'ip_vs']);
  t.notOk((await loadedIpvsModules()).includes('ip_vs'), 'ip_vs is unloaded');
  t.same(readdirSync('/proc/net').includes('ip_vs'), false);
  await modprobe(['-a', ...before]);

  await ipvs.addService({ protocol: 'tcp', address: '10.0.0.2', port: 80, scheduler: 'rr' });
  t.equal((await ns.exec('ipvsadm', ['-Sn'])).trim(), '-A -t 10.0.0.2:80 -s rr', 'the request after the reload was applied');
  t.match(await ipvs.listServices(), [{ address: '10.0.0.2' }]);
  t.not(familyId(), idBefore, 'the family came back under a new id, which the handle resolved');
});
