/**
 * The kernel's own explanation of a refusal (the netlink extended ack)
 * reaches the caller as `kernelMessage` and in the error's text: with the
 * dummy driver unloaded, rtnetlink refuses to create a dummy link with
 * EOPNOTSUPP and "Unknown device type" (rtnl_newlink()), the message
 * `ip link add ... type dummy` prints as "Error: Unknown device type.".
 * It unloads a module, so it runs in the sandbox kernel (or where
 * IPVS_NETLINK_UNLOAD_MODULES=1 allows it).
 */
import t from 'tap';
import { NetlinkError, Rtnl } from '../../lib/index.js';
import { freshNetns } from '../support/netns.js';
import { loadedModules, modprobe, moduleUnloadSkip, unloadModules } from '../support/ipvs-env.js';

t.test('a refusal with an extended ack: kernelMessage carries the kernel text', { skip: moduleUnloadSkip() }, async (t) => {
  const ns = await freshNetns(t, 'rtnl');
  const hadDummy = loadedModules((m) => m === 'dummy').length > 0;
  t.teardown(() => (hadDummy ? modprobe(['dummy']).catch(() => undefined) : undefined));
  if (hadDummy) await unloadModules(['dummy']);
  t.same(loadedModules((m) => m === 'dummy'), [], 'no dummy driver in the kernel');
  const tool = await ns.tryExec('ip', ['link', 'add', 'kube-ipvs0', 'type', 'dummy']);
  t.match(tool.stderr, /Error: Unknown device type\./, 'ip shows the kernel text');

  const rt = await Rtnl.open({ netns: ns.path });
  t.teardown(() => rt.close());
  const err = await rt.ensureDummyLink('kube-ipvs0').catch((e: unknown) => e);
  t.type(err, NetlinkError);
  t.match(err, { code: 'EOPNOTSUPP', errno: 95, operation: 'ensureDummyLink', subject: 'kube-ipvs0', kernelMessage: 'Unknown device type' });
  t.match((err as Error).message, /\[kernel: Unknown device type\]/, 'and the message quotes it');
  t.equal(await rt.getLink('kube-ipvs0'), undefined, 'nothing was created');

  if (hadDummy) {
    await modprobe(['dummy']);
    t.match(await rt.ensureDummyLink('kube-ipvs0'), { name: 'kube-ipvs0', kind: 'dummy', up: true }, 'with the driver back it works');
  }
});
