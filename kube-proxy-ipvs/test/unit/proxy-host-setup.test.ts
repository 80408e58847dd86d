/**
 * What the proxy sets on the host, as kube-proxy sets it: the conntrack
 * sysctls (pkg/proxy/conntrack: order, only-raise for nf_conntrack_max,
 * the 1 Mi cap, the hash size at a quarter, be_liberal only ever to 1,
 * whole seconds, every failure fatal with upstream's wording), the OOM
 * score (a failure only logged), and the families the host serves.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { type ConntrackIO, conntrackIO, conntrackMax, onlineCPUs, setConntrackSysctls } from '../../lib/kernel/conntrack-sysctls.js';
import type { Exec } from '../../lib/kernel/exec.js';
import { detectHostFamilies } from '../../lib/kernel/host-families.js';
import { detectIptables, hasRandomFully } from '../../lib/kernel/iptables-flavour.js';
import { makeLogger } from '../../lib/logging/logger.js';
import { defaultOptions, proxyConfigOf } from '../../lib/proxy/options.js';
import { applyOomScoreAdj } from '../../lib/proxy/oom-score.js';
import { scratchDir } from '../support/scratch.js';

/** The proxy's own logger at -v 5, its JSON lines parsed: `v` is the verbosity each was logged at. */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, logger: makeLogger({ format: 'json', verbosity: 5 }, { write: (l: string) => lines.push(JSON.parse(l)) }) };
}

function fakeIO(values: Record<string, number>, cpus: number, hashsize: number) {
  const writes: string[] = [];
  const io: ConntrackIO = {
    cpus: () => cpus,
    get: async (entries) => new Map(entries.filter((e) => e in values).map((e) => [e, values[e]])),
    set: async (pairs) => {
      for (const [entry, value] of pairs) {
        writes.push(`${entry}=${value}`);
        values[entry] = value;
      }
    },
    getHashsize: async () => hashsize,
    setHashsize: async (v) => {
      writes.push(`hashsize=${v}`);
      hashsize = v;
    },
  };
  return { io, writes };
}

const defaults = defaultOptions().conntrack;

t.test('getConntrackMax: per core × CPUs, at least min, capped at 1 Mi; 0 leaves it', async (t) => {
  t.equal(conntrackMax(defaults, 2), 131072, '2 × 32768 is below min: min');
  t.equal(conntrackMax(defaults, 8), 262144, 'scaled');
  t.equal(conntrackMax(defaults, 64), 1048576, 'capped');
  t.equal(conntrackMax({ maxPerCore: 0, min: 131072 }, 8), 0, 'maxPerCore 0: leave alone, min ignored');
  t.equal(conntrackMax({ maxPerCore: null, min: 131072 }, 8), 0);
  t.equal(conntrackMax({ maxPerCore: 10, min: null }, 4), 40);
});

t.test('online CPUs from sysfs lists', async (t) => {
  t.equal(onlineCPUs('0-3\n'), 4);
  t.equal(onlineCPUs('0-3,6,8-9'), 7);
  t.equal(onlineCPUs('0'), 1);
  t.ok(onlineCPUs('garbage') >= 1, 'unreadable: the runtime\'s count');
});

t.test('defaults on a 4-CPU host: max raised, hash size a quarter, TCP timeouts, nothing else', async (t) => {
  const { io, writes } = fakeIO({ 'net/netfilter/nf_conntrack_max': 65536, 'net/netfilter/nf_conntrack_tcp_timeout_established': 432000, 'net/netfilter/nf_conntrack_tcp_timeout_close_wait': 3600 }, 4, 16384);
  const { logger, lines } = capture();
  await setConntrackSysctls(defaults, io, logger);
  t.same(writes, ['net/netfilter/nf_conntrack_max=131072', 'hashsize=32768', 'net/netfilter/nf_conntrack_tcp_timeout_established=86400'], 'close_wait already 3600: not written');
  t.same(
    lines.filter((l) => l.v === 0).map((l) => [l.msg, l.entry ?? l.conntrackHashsize ?? l.nfConntrackMax, l.value]),
    [
      ['Setting nf_conntrack_max', 131072, undefined],
      ['Set sysctl', 'net/netfilter/nf_conntrack_max', 131072],
      ['Setting conntrack hashsize', 32768, undefined],
      ['Set sysctl', 'net/netfilter/nf_conntrack_tcp_timeout_established', 86400],
    ],
    "upstream's log lines",
  );
  t.same(lines.filter((l) => l.v !== 0).map((l) => [l.v, l.msg]), [[3, 'GetConntrackMax: using conntrack-min']], 'the choice of limit at V(3) (4 x 32768 is not above the minimum)');
});

t.test('"Setting nf_conntrack_max" is written whenever the limit is managed, raised or not; never with maxPerCore 0', async (t) => {
  const { io, writes } = fakeIO({ 'net/netfilter/nf_conntrack_max': 500000 }, 4, 200000);
  const { logger, lines } = capture();
  await setConntrackSysctls({ ...defaults, tcpEstablishedTimeoutMs: 0, tcpCloseWaitTimeoutMs: null }, io, logger);
  t.same(writes, []);
  t.same(lines.filter((l) => l.v === 0).map((l) => [l.msg, l.nfConntrackMax]), [['Setting nf_conntrack_max', 131072]]);
  const quiet = capture();
  await setConntrackSysctls({ ...defaults, maxPerCore: 0, tcpEstablishedTimeoutMs: 0, tcpCloseWaitTimeoutMs: null }, fakeIO({}, 4, 1).io, quiet.logger);
  t.same(quiet.lines, []);
});

t.test('nf_conntrack_max is only raised; a big enough hash size is left', async (t) => {
  const { io, writes } = fakeIO({ 'net/netfilter/nf_conntrack_max': 500000 }, 4, 200000);
  await setConntrackSysctls({ ...defaults, tcpEstablishedTimeoutMs: 0, tcpCloseWaitTimeoutMs: null }, io, pino({ level: 'silent' }));
  t.same(writes, []);
});

t.test('be_liberal only to 1, UDP timeouts in whole seconds', async (t) => {
  const { io, writes } = fakeIO({}, 1, 1 << 20);
  await setConntrackSysctls({ maxPerCore: 0, min: 0, tcpEstablishedTimeoutMs: null, tcpCloseWaitTimeoutMs: null, tcpBeLiberal: true, udpTimeoutMs: 30_900, udpStreamTimeoutMs: 120_000 }, io, pino({ level: 'silent' }));
  t.same(writes, ['net/netfilter/nf_conntrack_tcp_be_liberal=1', 'net/netfilter/nf_conntrack_udp_timeout=30', 'net/netfilter/nf_conntrack_udp_timeout_stream=120']);
  const { io: io2, writes: w2 } = fakeIO({}, 1, 1 << 20);
  await setConntrackSysctls({ ...defaults, maxPerCore: 0, tcpEstablishedTimeoutMs: null, tcpCloseWaitTimeoutMs: null, tcpBeLiberal: false }, io2, pino({ level: 'silent' }));
  t.same(w2, [], 'false leaves it (never written back to 0)');
});

t.test('a failure is fatal, in upstream\'s words (a read-only /sys with a hash size to raise)', async (t) => {
  const { io } = fakeIO({ 'net/netfilter/nf_conntrack_max': 1 }, 4, 1);
  io.setHashsize = async () => {
    throw Object.assign(new Error('open /sys/module/nf_conntrack/parameters/hashsize: read-only file system'), { code: 'EROFS' });
  };
  await t.rejects(setConntrackSysctls(defaults, io, pino({ level: 'silent' })), {
    name: 'ConntrackError',
    message: 'could not set conntrack parameters from kube-proxy configuration: open /sys/module/nf_conntrack/parameters/hashsize: read-only file system',
  });
});

t.test('OOM score: written to the file; a failure is logged at V(2), not fatal', async (t) => {
  const file = join(scratchDir('kp-oom-'), 'oom_score_adj');
  writeFileSync(file, '0');
  await applyOomScoreAdj(-999, pino({ level: 'silent' }), file);
  t.equal(readFileSync(file, 'utf8'), '-999');
  const { logger, lines } = capture();
  await applyOomScoreAdj(-999, logger, join(file, 'not-a-dir', 'x'));
  t.match(lines, [{ v: 2, msg: 'Failed to apply OOMScore', err: /ENOTDIR|ENOENT/ }]);
  await applyOomScoreAdj(null, logger, join(file, 'nope'));
  t.equal(lines.length, 1, 'null: nothing tried');
});

t.test('families from the host: the iptables flavour for each family, and IPv6 in the kernel', async (t) => {
  const fake = (ok: Set<string>): Exec => async (file, args) => {
    const key = `${file} ${args.join(' ')}`;
    return ok.has(key) ? { code: 0, stdout: '', stderr: '' } : { code: 1, stdout: '', stderr: `${file}: failed` };
  };
  const v4 = 'iptables-legacy-save -t nat';
  const v6 = 'ip6tables-legacy-save -t nat';
  const both = await detectHostFamilies(fake(new Set([v4, v6])), () => true);
  t.same([both.families, both.iptables?.mode], [['inet', 'inet6'], 'legacy'], 'both: dual-stack, with the flavour found');
  const noKernel = await detectHostFamilies(fake(new Set([v4, v6])), () => false);
  t.same([noKernel.families, noKernel.missing], [['inet'], [{ family: 'inet6', message: 'No kernel support for family' }]]);
  const noTool = await detectHostFamilies(fake(new Set([v4])), () => true);
  t.same([noTool.families, noTool.missing], [['inet'], [{ family: 'inet6', message: 'No iptables support for family', error: 'ip6tables-legacy-save: failed' }]], 'the flavour\'s own IPv6 program');
  const none = await detectHostFamilies(fake(new Set()), () => true);
  t.same(none.families, []);
  t.match(none.missing, [{ family: 'inet', message: 'No iptables support for family', error: /neither iptables-save nor iptables-legacy-save works/ }, { family: 'inet6' }]);
});

t.test('MASQUERADE --random-fully as upstream\'s iptables runner decides: iptables 1.6.2 or later, read from iptables-save\'s header', async (t) => {
  const asked: string[] = [];
  const saving = (header: string, versionOut = ''): Exec => async (file, args) => {
    if (file === 'iptables-save') return { code: 0, stdout: `${header}*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n`, stderr: '' };
    if (file === 'iptables' && args[0] === '--version') {
      asked.push(file);
      return versionOut ? { code: 0, stdout: versionOut, stderr: '' } : { code: 1, stdout: '', stderr: 'iptables: not found' };
    }
    return { code: 1, stdout: '', stderr: 'no legacy tables' };
  };
  t.equal((await detectIptables(saving('# Generated by iptables-save v1.8.9 (nf_tables) on Mon Nov 30 15:07:53 2026\n'))).version, '1.8.9');
  t.equal((await detectIptables(saving('# Generated by iptables-save v1.6.1 on Mon Nov 30 15:07:53 2026\n'))).version, '1.6.1');
  t.equal((await detectIptables(saving('# Generated by xtables-save v1.8.2 on Mon Nov 30 15:07:53 2026\n'))).version, '1.8.2', 'iptables 1.8.0-1.8.2 (nft) name it xtables-save');
  t.equal((await detectIptables(saving('# Generated by iptables-nft-save v1.8.10 (nf_tables) on Mon Nov 30 15:07:53 2026\n'))).version, '1.8.10', 'later ones by the name it was run as');
  t.same(asked, [], 'a header read: no program run for the version');
  t.equal((await detectIptables(saving('', 'iptables v1.8.2 (nf_tables)\n'))).version, '1.8.2', "no header (an empty table, in some versions): `iptables --version`, upstream's source");
  t.same(asked, ['iptables']);
  t.equal((await detectIptables(saving(''))).version, undefined, 'neither: no version');
  const cases: Array<[string | undefined, boolean]> = [['1.8.9', true], ['1.6.2', true], ['1.6.1', false], ['1.4.21', false], ['1.10.0', true], ['2.0', true], [undefined, false]];
  for (const [version, random] of cases) t.equal(hasRandomFully(version), random, `${version ?? 'no version (upstream assumes 1.4.11)'}: ${random}`);
  const o = defaultOptions();
  t.equal(proxyConfigOf(o, { version: '1.6.1' }).randomFully, false, 'the running proxy writes what its iptables takes');
  t.equal(proxyConfigOf(o, { version: '1.8.9' }).randomFully, true);
  t.equal(proxyConfigOf(o, {}).randomFully, false, 'no version read');
  t.equal(proxyConfigOf({ ...o, ipvs: { ...o.ipvs, rulesBackend: 'nftables' } }, {}).randomFully, true, 'the nftables backend always masquerades fully-random, as kube-proxy\'s nftables mode');
  t.equal(proxyConfigOf(o).randomFully, true, 'plan and the one-shot jobs, which look at no host: the default');
});

t.test('with --netns, the namespace\'s values are read with one sysctl and written with one', async (t) => {
  const calls: string[] = [];
  const exec: Exec = async (file, args) => {
    calls.push(`${file} ${args.join(' ')}`);
    if (args[0] === '-q') return { code: 0, stdout: '', stderr: '' };
    return { code: 255, stdout: 'net.netfilter.nf_conntrack_tcp_timeout_established = 432000\n', stderr: 'sysctl: cannot stat /proc/sys/net/netfilter/nf_conntrack_udp_timeout_stream: No such file or directory\n' };
  };
  const io = conntrackIO(exec, { ownNamespace: false });
  const got = await io.get(['net/netfilter/nf_conntrack_tcp_timeout_established', 'net/netfilter/nf_conntrack_udp_timeout_stream']);
  t.same([...got], [['net/netfilter/nf_conntrack_tcp_timeout_established', 432000]], 'an unreadable key is missing, not an error');
  await io.set([['net/netfilter/nf_conntrack_tcp_timeout_established', 86400], ['net/netfilter/nf_conntrack_udp_timeout_stream', 120]]);
  t.same(calls, [
    'sysctl net.netfilter.nf_conntrack_tcp_timeout_established net.netfilter.nf_conntrack_udp_timeout_stream',
    'sysctl -q -w net.netfilter.nf_conntrack_tcp_timeout_established=86400 net.netfilter.nf_conntrack_udp_timeout_stream=120',
  ]);
  const failing = conntrackIO(async () => ({ code: 255, stdout: '', stderr: 'sysctl: permission denied on key "net.netfilter.nf_conntrack_udp_timeout"' }), { ownNamespace: false });
  await t.rejects(failing.set([['net/netfilter/nf_conntrack_udp_timeout', 30]]), /sysctl -q -w net.netfilter.nf_conntrack_udp_timeout=30 exited 255: sysctl: permission denied/);
});
