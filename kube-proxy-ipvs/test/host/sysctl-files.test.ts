/**
 * The sysctls the proxy writes through /proc/sys when it programs its own
 * network namespace (no --netns), on this host's kernel: the writer runs
 * in a fresh namespace (a child node process started there, as the proxy
 * would be) and `sysctl` reads what it wrote in that namespace and nowhere
 * else. A key the kernel does not have is reported by name, and the ones
 * after it are still written, as `sysctl -w` does.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { freshNetns, type Netns } from '../../../test/support/netns.js';

const run = promisify(execFile);
const writer = fileURLToPath(new URL('../../lib/kernel/sysctls.ts', import.meta.url));

/** writeSysctlFiles(list) run by a node process inside `ns`; its error message, or '' when it succeeded. */
async function writeIn(ns: Netns, list: Array<{ key: string; value: number }>): Promise<string> {
  const code = `const { writeSysctlFiles } = await import(${JSON.stringify(writer)});
try { await writeSysctlFiles(${JSON.stringify(list)}); console.log(''); } catch (e) { console.log(e.message); }`;
  return (await ns.exec(process.execPath, [...process.execArgv, '--input-type=module', '-e', code])).trim();
}

const read = async (ns: Netns, key: string) => (await ns.exec('sysctl', ['-n', key])).trim();

t.test('written in the namespace the process is in, and read there by sysctl', async (t) => {
  const ns = await freshNetns(t, 'sysctlf');
  const keys = ['net.ipv4.ip_forward', 'net.ipv4.conf.all.arp_ignore', 'net.ipv4.conf.all.arp_announce'];
  for (const key of keys) t.equal(await read(ns, key), '0', `${key} starts at 0 in a fresh namespace`);
  const hostAnnounce = (await run('sysctl', ['-n', 'net.ipv4.conf.all.arp_announce'])).stdout.trim();
  t.equal(await writeIn(ns, [{ key: keys[0], value: 1 }, { key: keys[1], value: 1 }, { key: keys[2], value: 2 }]), '');
  t.same(await Promise.all(keys.map((k) => read(ns, k))), ['1', '1', '2']);
  t.equal((await run('sysctl', ['-n', 'net.ipv4.conf.all.arp_announce'])).stdout.trim(), hostAnnounce, "the host's own value is left alone");
});

t.test('a key the kernel lacks is named; the others are still written', async (t) => {
  const ns = await freshNetns(t, 'sysctlf');
  const message = await writeIn(ns, [{ key: 'net.ipv4.no_such_setting', value: 1 }, { key: 'net.ipv4.conf.all.arp_ignore', value: 1 }]);
  t.match(message, /^could not set net\.ipv4\.no_such_setting=1: ENOENT/);
  t.notMatch(message, /arp_ignore/);
  t.equal(await read(ns, 'net.ipv4.conf.all.arp_ignore'), '1');
});
