/**
 * The sysctls the proxy writes through /proc/sys when it programs its own
 * network namespace (no --netns), on this host's kernel: the writer runs
 * in a fresh namespace (a child node process started there, as the proxy
 * would be) and `sysctl` reads what it wrote in that namespace and nowhere
 * else. A key the kernel does not have is reported by name, and the ones
 * after it are still written, as `sysctl -w` does. The conntrack settings
 * go the same way there, with no program run: what the proxy sets,
 * `sysctl` reads; what `sysctl` sets, the proxy reads.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { freshNetns, type Netns } from '../../../test/support/netns.js';

const run = promisify(execFile);
const writer = fileURLToPath(new URL('../../lib/kernel/sysctls.ts', import.meta.url));
const conntrack = fileURLToPath(new URL('../../lib/kernel/conntrack-sysctls.ts', import.meta.url));

/** The proxy's sysctl writer for its own namespace, run on `list` by a node process inside `ns` (a program run fails it); its error message, or '' when it succeeded. */
async function writeIn(ns: Netns, list: Array<{ key: string; value: number }>): Promise<string> {
  const code = `const { sysctlAccess } = await import(${JSON.stringify(writer)});
const sysctls = sysctlAccess(async (file) => { throw new Error('ran ' + file); }, { ownNamespace: true });
try { await sysctls.write(${JSON.stringify(list)}); console.log(''); } catch (e) { console.log(e.message); }`;
  return (await ns.exec(process.execPath, [...process.execArgv, '--input-type=module', '-e', code])).trim();
}

const read = async (ns: Netns, key: string) => (await ns.exec('sysctl', ['-n', key])).trim();

/**
 * `body` run by a node process inside `ns` with `io`, the proxy's conntrack
 * I/O for its own namespace, whose program runner fails the test if it is
 * ever called; prints what `body` returns as JSON.
 */
async function conntrackIn(ns: Netns, body: string): Promise<unknown> {
  const code = `const { conntrackIO, setConntrackSysctls } = await import(${JSON.stringify(conntrack)});
const { pino } = await import('pino');
const log = pino({ level: 'silent' });
const io = conntrackIO(async (file) => { throw new Error('ran ' + file); }, { ownNamespace: true });
try { console.log(JSON.stringify(await (async () => { ${body} })())); } catch (e) { console.log(JSON.stringify({ error: e.message })); }`;
  return JSON.parse(await ns.exec(process.execPath, [...process.execArgv, '--input-type=module', '-e', code]));
}

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

t.test('conntrack: kube-proxy\'s settings written in the proxy\'s namespace with no program run, read back by sysctl', async (t) => {
  const ns = await freshNetns(t, 'sysctlf');
  const keys = ['net.netfilter.nf_conntrack_tcp_timeout_established', 'net.netfilter.nf_conntrack_tcp_timeout_close_wait', 'net.netfilter.nf_conntrack_tcp_be_liberal', 'net.netfilter.nf_conntrack_udp_timeout'];
  const host = (await run('sysctl', ['-n', keys[0]])).stdout.trim();
  const udpBefore = await read(ns, keys[3]);
  const settings = { maxPerCore: 0, min: null, tcpEstablishedTimeoutMs: 86_400_000, tcpCloseWaitTimeoutMs: 3_600_000, tcpBeLiberal: true, udpTimeoutMs: 0, udpStreamTimeoutMs: 0 };
  t.same(await conntrackIn(ns, `await setConntrackSysctls(${JSON.stringify(settings)}, io, log); return 'set';`), 'set');
  t.same(await Promise.all(keys.map((k) => read(ns, k))), ['86400', '3600', '1', udpBefore], 'established 24h, close-wait 1h, be_liberal on, the UDP timeout (0: left) as the kernel had it');
  t.equal((await run('sysctl', ['-n', keys[0]])).stdout.trim(), host, "the host's own value is left alone");
});

t.test('conntrack: what sysctl writes in the namespace, the proxy reads; a write the kernel refuses is named', async (t) => {
  const ns = await freshNetns(t, 'sysctlf');
  await ns.exec('sysctl', ['-q', '-w', 'net.netfilter.nf_conntrack_udp_timeout=45', 'net.netfilter.nf_conntrack_tcp_timeout_close_wait=1234']);
  const entries = ['net/netfilter/nf_conntrack_udp_timeout', 'net/netfilter/nf_conntrack_tcp_timeout_close_wait', 'net/netfilter/nf_conntrack_max', 'net/netfilter/no_such_setting'];
  const got = await conntrackIn(ns, `return [...await io.get(${JSON.stringify(entries)})];`);
  const max = Number(await read(ns, 'net.netfilter.nf_conntrack_max'));
  t.same(got, [[entries[0], 45], [entries[1], 1234], [entries[2], max]], 'each as sysctl shows it; a key the kernel lacks is left out');
  // nf_conntrack_max is host-wide: a namespace other than the initial one may read it, not write it.
  const refused = (await conntrackIn(ns, `await io.set([['net/netfilter/nf_conntrack_max', ${max + 1}]]);`)) as { error: string };
  t.match(refused.error, new RegExp(`^could not set net\\.netfilter\\.nf_conntrack_max=${max + 1}: EACCES`));
  t.equal(Number(await read(ns, 'net.netfilter.nf_conntrack_max')), max);
});
