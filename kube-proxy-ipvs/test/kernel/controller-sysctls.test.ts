/**
 * The kernel settings kube-proxy's IPVS mode makes, read back from
 * /proc/sys in the controller's namespace after start(): the IPVS sysctls,
 * ip_forward, and strictARP's arp_ignore/arp_announce; conn_reuse_mode is
 * left alone on this 6.1 kernel (#93297). A resync writes them again; the
 * IPVS timeouts are set at start, as `ipvsadm -L --timeout` shows. With
 * --netns a `sysctl` run in the namespace writes them; a controller in its
 * own namespace writes /proc/sys itself, with the same result. As
 * kube-proxy's EnsureSysctl, each is written only where it differs (and
 * logged then), so a read-only /proc/sys already set passes.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { defaultProxyConfig, type NodeInfo } from '../../lib/kubernetes/model.js';
import { kernelVersion } from '../../lib/kernel/sysctls.js';
import { startController } from '../support/controller-kernel.js';
import { freshNetns, type Netns } from '../../../test/support/netns.js';
import { scratchDir } from '../support/scratch.js';

const node: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10'] };
const KEYS = [
  'net/ipv4/vs/conntrack',
  'net/ipv4/vs/expire_nodest_conn',
  'net/ipv4/vs/expire_quiescent_template',
  'net/ipv4/vs/conn_reuse_mode',
  'net/ipv4/ip_forward',
  'net/ipv4/conf/all/arp_ignore',
  'net/ipv4/conf/all/arp_announce',
];

/** /proc/sys as a process in the namespace sees it (the net/ part is per namespace). */
async function read(ns: Netns): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const k of KEYS) out[k] = Number((await ns.exec('cat', [`/proc/sys/${k}`])).trim());
  return out;
}

t.test('sysctls and strictARP, read back from /proc/sys', async (t) => {
  const [major, minor] = kernelVersion(release()) ?? [0, 0];
  t.ok(major > 5 || (major === 5 && minor >= 9), `kernel ${release()} is 5.9 or later: conn_reuse_mode stays as it is`);

  const strict = await freshNetns(t, 'sysa');
  // Opening an IPVS socket would load ip_vs; the sandbox has it, so the vs/ keys exist before start.
  const before = await read(strict);
  t.match(before, { 'net/ipv4/vs/conntrack': 0, 'net/ipv4/vs/expire_nodest_conn': 0, 'net/ipv4/vs/expire_quiescent_template': 0, 'net/ipv4/ip_forward': 0, 'net/ipv4/conf/all/arp_ignore': 0, 'net/ipv4/conf/all/arp_announce': 0 }, 'a fresh namespace has none of them set');

  await startController(t, strict, { config: defaultProxyConfig({ strictARP: true }), node });
  t.same(
    await read(strict),
    {
      'net/ipv4/vs/conntrack': 1,
      'net/ipv4/vs/expire_nodest_conn': 1,
      'net/ipv4/vs/expire_quiescent_template': 1,
      'net/ipv4/vs/conn_reuse_mode': before['net/ipv4/vs/conn_reuse_mode'],
      'net/ipv4/ip_forward': 1,
      'net/ipv4/conf/all/arp_ignore': 1,
      'net/ipv4/conf/all/arp_announce': 2,
    },
    'after start() with strictARP: every setting as kube-proxy makes it, conn_reuse_mode untouched',
  );

  const loose = await freshNetns(t, 'sysb');
  await startController(t, loose, { config: defaultProxyConfig({ strictARP: false }), node });
  t.match(await read(loose), { 'net/ipv4/vs/conntrack': 1, 'net/ipv4/ip_forward': 1, 'net/ipv4/conf/all/arp_ignore': 0, 'net/ipv4/conf/all/arp_announce': 0 }, 'without strictARP the ARP settings are left alone');
  t.equal((await read(strict))['net/ipv4/conf/all/arp_ignore'], 1, 'and each namespace keeps its own');
});

t.test('a resync writes the sysctls again (an ip_vs reload resets them)', async (t) => {
  const ns = await freshNetns(t, 'sysc');
  const c = await startController(t, ns, { config: defaultProxyConfig(), node });
  await c.sync();
  // What `modprobe -r ip_vs; modprobe ip_vs` leaves behind, without reloading the module under the other tests.
  await ns.exec('sysctl', ['-q', '-w', 'net.ipv4.vs.conntrack=0', 'net.ipv4.vs.expire_nodest_conn=0']);
  t.match(await read(ns), { 'net/ipv4/vs/conntrack': 0, 'net/ipv4/vs/expire_nodest_conn': 0 });
  await c.resync();
  t.match(await read(ns), { 'net/ipv4/vs/conntrack': 1, 'net/ipv4/vs/expire_nodest_conn': 1 }, 'restored by the resync');
});

/** The imports of a node program run inside a namespace with a Controller (as the proxy runs on a node). */
const CONTROLLER_IMPORTS = [
  ['Controller', '../../lib/kernel/controller.ts'],
  ['LEGACY_IPTABLES', '../../lib/kernel/iptables-runner.ts'],
  ['defaultProxyConfig', '../../lib/kubernetes/model.ts'],
]
  .map(([name, path]) => `const { ${name} } = await import(${JSON.stringify(fileURLToPath(new URL(path, import.meta.url)))});`)
  .concat("const { writeFileSync } = await import('node:fs');")
  .join('\n');

t.test('in its own namespace (no --netns) they are written through /proc/sys, and by a resync again', async (t) => {
  const ns = await freshNetns(t, 'sysf');
  // A controller in a node process started inside the namespace, as the proxy runs on a node: start, then a resync
  // after conntrack was reset (what an ip_vs reload does).
  const code = `${CONTROLLER_IMPORTS}
const c = new Controller({ config: defaultProxyConfig({ strictARP: true }), node: ${JSON.stringify(node)}, iptables: LEGACY_IPTABLES });
await c.start();
writeFileSync('/proc/sys/net/ipv4/vs/conntrack', '0');
await c.resync();
c.close();`;
  // A sysctl program that fails comes first in its PATH: the settings must not depend on the program.
  const bin = scratchDir('no-sysctl-');
  t.teardown(() => rmSync(bin, { recursive: true, force: true }));
  writeFileSync(join(bin, 'sysctl'), '#!/bin/sh\necho "sysctl run in the proxy\'s own namespace" >&2\nexit 1\n', { mode: 0o755 });
  await ns.exec('env', [`PATH=${bin}:${process.env.PATH}`, process.execPath, ...process.execArgv, '--input-type=module', '-e', code]);
  t.same(
    await read(ns),
    {
      'net/ipv4/vs/conntrack': 1,
      'net/ipv4/vs/expire_nodest_conn': 1,
      'net/ipv4/vs/expire_quiescent_template': 1,
      'net/ipv4/vs/conn_reuse_mode': (await read(await freshNetns(t, 'sysg')))['net/ipv4/vs/conn_reuse_mode'],
      'net/ipv4/ip_forward': 1,
      'net/ipv4/conf/all/arp_ignore': 1,
      'net/ipv4/conf/all/arp_announce': 2,
    },
    'as with --netns: every setting as kube-proxy makes it, conntrack restored by the resync',
  );
});

/**
 * Runs a Controller (strictARP) in a node process inside `ns`, as the proxy runs on a node: start, a resync, close.
 * `readOnlySys`: /proc/sys mounted read-only for it (an unprivileged container's), in the mount namespace
 * `ip netns exec` makes for the run. Resolves with its exit code, stderr and the lines it logged at info and above.
 */
async function ownNamespaceRun(ns: Netns, readOnlySys: boolean, driftAfterStart?: string): Promise<{ code: number; stderr: string; lines: Array<Record<string, unknown>> }> {
  const code = `${CONTROLLER_IMPORTS}
const lines = [];
const at = (level) => (fields, msg) => void lines.push(typeof fields === 'string' ? { level, msg: fields } : { level, msg, ...fields });
const logger = { info: at('info'), warn: at('warn'), error: at('error'), debug() {}, trace() {} };
logger.child = () => logger;
const c = new Controller({ config: defaultProxyConfig({ strictARP: true }), node: ${JSON.stringify(node)}, iptables: LEGACY_IPTABLES, logger });
try {
  await c.start();
  // Drift behind its back, through a writable view of /proc/sys it does not use; then two resyncs.
  if (process.env.DRIFT) writeFileSync(process.env.DRIFT_VIEW + '/' + process.env.DRIFT, '0');
  await c.resync();
  if (process.env.DRIFT) await c.resync();
} finally {
  c.close();
  process.stdout.write(JSON.stringify(lines));
}`;
  const view = driftAfterStart === undefined ? '' : `view=$(mktemp -d) && mount --bind /proc/sys "$view" && export DRIFT_VIEW="$view" DRIFT=${driftAfterStart} && `;
  const script = `${view}${readOnlySys ? 'mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && ' : ''}exec "$@"`;
  const r = await ns.tryExec('sh', ['-c', script, 'sh', process.execPath, ...process.execArgv, '--input-type=module', '-e', code]);
  return { code: r.code, stderr: r.stderr, lines: r.stdout ? (JSON.parse(r.stdout) as Array<Record<string, unknown>>) : [] };
}

const STRICT_SETTINGS = ['net.ipv4.vs.conntrack=1', 'net.ipv4.vs.expire_nodest_conn=1', 'net.ipv4.vs.expire_quiescent_template=1', 'net.ipv4.ip_forward=1', 'net.ipv4.conf.all.arp_ignore=1', 'net.ipv4.conf.all.arp_announce=2'];

t.test("each setting is written only where it differs, as kube-proxy's EnsureSysctl: a read-only /proc/sys the host already set passes", async (t) => {
  const ns = await freshNetns(t, 'sysro');
  // What a fresh namespace has (its IPv4 settings may come from the host's): sysctl's reading.
  const wanted: Array<[string, number]> = STRICT_SETTINGS.map((s) => [s.split('=')[0].replaceAll('.', '/'), Number(s.split('=')[1])]);
  const before = new Map<string, number>();
  for (const [key] of wanted) before.set(key, Number((await ns.exec('sysctl', ['-n', key.replaceAll('/', '.')])).trim()));
  const first = await ownNamespaceRun(ns, false);
  t.equal(first.code, 0, first.stderr);
  const changed = first.lines.filter((l) => l.msg === 'Changed sysctl');
  t.same(
    changed.map((l) => [l.name, l.before, l.after]).sort(),
    wanted.filter(([key, value]) => before.get(key) !== value).map(([key, value]) => [key, before.get(key), value]).sort(),
    "each setting that differed changed once, logged as upstream's \"Changed sysctl\" with what sysctl read before (the resync found nothing to change)",
  );
  t.ok(changed.some((l) => l.name === 'net/ipv4/vs/conntrack'), 'vs/conntrack among them (0 in a fresh namespace)');

  // The settings as an administrator (or an init container) makes them, with sysctl; then /proc/sys read-only.
  const preset = await freshNetns(t, 'sysrp');
  await preset.exec('sysctl', ['-q', '-w', ...STRICT_SETTINGS]);
  const readOnly = await ownNamespaceRun(preset, true);
  t.equal(readOnly.code, 0, `start and resync pass with nothing to write (${readOnly.stderr.trim().slice(-300)})`);
  t.same(readOnly.lines.filter((l) => l.msg === 'Changed sysctl'), [], 'nothing changed, nothing written');
  t.match((await preset.exec('sysctl', ['net.ipv4.vs.conntrack', 'net.ipv4.conf.all.arp_announce'])).split('\n'), ['net.ipv4.vs.conntrack = 1', 'net.ipv4.conf.all.arp_announce = 2'], 'sysctl reads them as set');

  const drift = await ownNamespaceRun(preset, true, 'net/ipv4/vs/expire_nodest_conn');
  t.equal(drift.code, 0, `a value that drifts after the start and cannot be set again fails no resync (${drift.stderr.trim().slice(-300)})`);
  t.match(
    drift.lines.filter((l) => l.level === 'error'),
    [{ msg: 'Could not set the IPVS sysctls again; set them on the node', err: /net\.ipv4\.vs\.expire_nodest_conn=1: .*read-only file system/i }],
    'it is reported, naming the setting, once for the two resyncs',
  );
  t.equal((await preset.exec('sysctl', ['-n', 'net.ipv4.vs.expire_nodest_conn'])).trim(), '0', 'sysctl reads the drifted value, not written');

  await preset.exec('sysctl', ['-q', '-w', 'net.ipv4.vs.expire_nodest_conn=0']);
  const drifted = await ownNamespaceRun(preset, true);
  t.not(drifted.code, 0, 'one setting differs and /proc/sys is read-only: the start fails');
  t.match(drifted.stderr, /net\.ipv4\.vs\.expire_nodest_conn=1: .*read-only file system/i, 'naming the setting it could not write, and why');
  t.notMatch(drifted.stderr, /net\.ipv4\.vs\.conntrack=1/, 'and only that one');
});

t.test('IPVS timeouts: set at start through the controller\'s handle; a 0 leaves the kernel\'s', async (t) => {
  const timeouts = async (n: Netns) => /Timeout \(tcp tcpfin udp\): (.*)/.exec(await n.exec('ipvsadm', ['-L', '--timeout']))![1];
  const ns = await freshNetns(t, 'sysd');
  const kernel = await timeouts(ns);
  await startController(t, ns, { config: defaultProxyConfig(), node, ipvsTimeouts: { tcp: 1800, tcpFin: 0, udp: 45 } });
  t.equal(await timeouts(ns), `1800 ${kernel.split(' ')[1]} 45`, 'tcp and udp set, tcpfin as it was (ipvsadm -L --timeout)');
  const untouched = await freshNetns(t, 'syse');
  await startController(t, untouched, { config: defaultProxyConfig(), node });
  t.equal(await timeouts(untouched), kernel, 'no timeouts given: the kernel\'s stay');
});
