/**
 * The state kube-proxy's own IPVS mode leaves on a node, built with the
 * tools it uses (ipvsadm, ipset, iptables-restore, ip), from the fixtures
 * in test/fixtures/upstream-ipvs/ (see the README there for where each
 * line comes from); what the reference tools show of a node's state; and
 * the commands kube-proxy's next sync runs against state it finds, to see
 * whether it would take that state over as it is.
 */
import { readFileSync } from 'node:fs';
import type { Netns } from '../../../test/support/netns.js';
import { IP6TABLES, IPTABLES } from './controller-kernel.js';

const fixtureUrl = (name: string) => new URL(`../fixtures/upstream-ipvs/${name}`, import.meta.url);
const fixture = (name: string) => readFileSync(fixtureUrl(name), 'utf8');

export const UPSTREAM = {
  ipvsadm: fixture('ipvsadm.rules'),
  ipset: fixture('ipset.restore'),
  iptables: fixture('iptables.restore'),
  ip6tables: fixture('ip6tables.restore'),
};

/** The sysctls kube-proxy's IPVS proxier sets (NewProxier) on a 6.1 kernel: conn_reuse_mode is left alone from 5.9 on. */
const SYSCTLS = ['net.ipv4.vs.conntrack=1', 'net.ipv4.vs.expire_nodest_conn=1', 'net.ipv4.vs.expire_quiescent_template=1', 'net.ipv4.ip_forward=1'];

/**
 * Builds kube-proxy's state in `ns`: kube-ipvs0 (a dummy, left down, as
 * EnsureDummyDevice makes it), the VIP bound, sets, rules, virtual servers.
 * One shell, as every program started costs in the sandbox.
 */
export async function loadUpstreamState(ns: Netns): Promise<void> {
  const file = (name: string) => `'${fixtureUrl(name).pathname}'`;
  await ns.exec('sh', [
    '-ec',
    [
      `sysctl -q -w ${SYSCTLS.join(' ')}`,
      'ip link add kube-ipvs0 type dummy',
      'ip addr add 10.96.0.10/32 dev kube-ipvs0',
      `ipset restore < ${file('ipset.restore')}`,
      `${IPTABLES.restore} --noflush < ${file('iptables.restore')}`,
      `${IP6TABLES.restore} --noflush < ${file('ip6tables.restore')}`,
      `ipvsadm -R < ${file('ipvsadm.rules')}`,
    ].join('\n'),
  ]);
}

export interface NodeViews {
  /** ipvsadm -Sn, sorted. */
  ipvs: string[];
  /** ipset save of the KUBE-* sets, sorted, without the random initval. */
  ipsets: string[];
  /** iptables-save / ip6tables-save lines naming a KUBE-* chain, in the order printed (chain order matters). */
  iptables: string[];
  ip6tables: string[];
  /** kube-ipvs0's kind and addresses (link-local left out). */
  kubeIpvs0: string[];
}

/** What the tools show, read with one shell (one program started instead of six). */
export async function nodeViews(ns: Netns): Promise<NodeViews> {
  const commands = ['ipvsadm -Sn', 'ipset save', IPTABLES.save, IP6TABLES.save, 'ip -d -o link show dev kube-ipvs0', 'ip -o addr show dev kube-ipvs0'];
  const out = await ns.exec('sh', ['-ec', commands.map((c) => `echo '%%%'; ${c}`).join('\n')]);
  const [ipvs, ipsets, v4, v6, link, addrs] = out.split('%%%\n').slice(1).map((part) => part.split('\n').filter(Boolean));
  const kube = (saved: string[]) => saved.filter((l) => !l.startsWith('#') && (l.includes('KUBE-') || l.startsWith('*')));
  return {
    ipvs: ipvs.sort(),
    ipsets: ipsets
      .filter((l) => / KUBE-/.test(l))
      .map((l) => l.replace(/ initval 0x[0-9a-f]+/, ''))
      .sort(),
    iptables: kube(v4),
    ip6tables: kube(v6),
    kubeIpvs0: [
      ...(link.some((l) => /\bdummy\b/.test(l)) ? ['dummy'] : []),
      ...addrs.flatMap((l) => (/scope link/.test(l) ? [] : [/\binet6? (\S+)/.exec(l)![1]])),
    ],
  };
}

/** Whether kube-ipvs0 is up. */
export async function kubeIpvs0Up(ns: Netns): Promise<boolean> {
  return /<[^>]*\bUP\b/.test(await ns.exec('ip', ['link', 'show', 'dev', 'kube-ipvs0']));
}

/**
 * What kube-proxy's next sync runs against state it finds (syncProxyRules):
 * `ipset create NAME TYPE ... -exist` for every set (ensureIPSet; a set of
 * the same name made differently fails it), its iptables-restore payload
 * with --noflush --counters, and `iptables -C` for each jump before it
 * would insert one (EnsureRule). One shell, every command's status
 * reported; the virtual servers it compares with GetVirtualServer are
 * checked by the caller against ipvsadm.rules.
 */
export async function upstreamResync(ns: Netns): Promise<{ failed: string[] }> {
  const creates = UPSTREAM.ipset
    .split('\n')
    .filter((l) => l.startsWith('create '))
    .map((l) => `ipset ${l} -exist`);
  // The restore payload is the fixture without the -I lines (the jumps, which kube-proxy ensures apart).
  const payload = (name: string) => `grep -v '^-I ' '${fixtureUrl(name).pathname}'`;
  const jumps = (text: string, tool: string) => {
    let table = '';
    const out: string[] = [];
    for (const l of text.split('\n')) {
      if (l.startsWith('*')) table = l.slice(1);
      else if (l.startsWith('-I ')) out.push(`${tool} -w 5 -t ${table} -C ${l.slice(3)}`);
    }
    return out;
  };
  const commands = [
    ...creates,
    `${payload('iptables.restore')} | ${IPTABLES.restore} -w 5 --noflush --counters`,
    `${payload('ip6tables.restore')} | ${IP6TABLES.restore} -w 5 --noflush --counters`,
    ...jumps(UPSTREAM.iptables, IPTABLES.iptables),
    ...jumps(UPSTREAM.ip6tables, IP6TABLES.iptables),
  ];
  const script = commands.map((c) => `if ! ${c} >/dev/null 2>&1; then echo ${JSON.stringify(c.slice(0, 120))}; fi`).join('\n');
  const out = await ns.exec('sh', ['-c', script]);
  return { failed: out.split('\n').filter(Boolean) };
}
