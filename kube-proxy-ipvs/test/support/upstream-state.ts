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

const fixture = (name: string) => readFileSync(new URL(`../fixtures/upstream-ipvs/${name}`, import.meta.url), 'utf8');

export const UPSTREAM = {
  ipvsadm: fixture('ipvsadm.rules'),
  ipset: fixture('ipset.restore'),
  iptables: fixture('iptables.restore'),
  ip6tables: fixture('ip6tables.restore'),
};

/** The sysctls kube-proxy's IPVS proxier sets (NewProxier) on a 6.1 kernel: conn_reuse_mode is left alone from 5.9 on. */
const SYSCTLS = ['net.ipv4.vs.conntrack=1', 'net.ipv4.vs.expire_nodest_conn=1', 'net.ipv4.vs.expire_quiescent_template=1', 'net.ipv4.ip_forward=1'];

/** Builds kube-proxy's state in `ns`: kube-ipvs0 (a dummy, left down, as EnsureDummyDevice makes it), the VIP bound, sets, rules, virtual servers. */
export async function loadUpstreamState(ns: Netns): Promise<void> {
  await ns.exec('sysctl', ['-q', '-w', ...SYSCTLS]);
  await ns.exec('ip', ['link', 'add', 'kube-ipvs0', 'type', 'dummy']);
  await ns.exec('ip', ['addr', 'add', '10.96.0.10/32', 'dev', 'kube-ipvs0']);
  await ns.exec('ipset', ['restore'], UPSTREAM.ipset);
  await ns.exec(IPTABLES.restore, ['--noflush'], UPSTREAM.iptables);
  await ns.exec(IP6TABLES.restore, ['--noflush'], UPSTREAM.ip6tables);
  await ns.exec('ipvsadm', ['-R'], UPSTREAM.ipvsadm);
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

export async function nodeViews(ns: Netns): Promise<NodeViews> {
  const lines = (s: string) => s.split('\n').filter(Boolean);
  const kube = (saved: string) => lines(saved).filter((l) => !l.startsWith('#') && (l.includes('KUBE-') || l.startsWith('*')));
  const link = await ns.exec('ip', ['-d', '-o', 'addr', 'show', 'dev', 'kube-ipvs0']);
  return {
    ipvs: lines(await ns.exec('ipvsadm', ['-Sn'])).sort(),
    ipsets: lines(await ns.exec('ipset', ['save']))
      .filter((l) => / KUBE-/.test(l))
      .map((l) => l.replace(/ initval 0x[0-9a-f]+/, ''))
      .sort(),
    iptables: kube(await ns.exec(IPTABLES.save, [])),
    ip6tables: kube(await ns.exec(IP6TABLES.save, [])),
    kubeIpvs0: [
      ...(/\bdummy\b/.test(await ns.exec('ip', ['-d', 'link', 'show', 'dev', 'kube-ipvs0'])) ? ['dummy'] : []),
      ...lines(link).flatMap((l) => (/scope link/.test(l) ? [] : [/\binet6? (\S+)/.exec(l)![1]])),
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
  const payload = (text: string) => text.split('\n').filter((l) => !l.startsWith('-I ')).join('\n');
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
    `printf '%s' '${payload(UPSTREAM.iptables)}' | ${IPTABLES.restore} -w 5 --noflush --counters`,
    `printf '%s' '${payload(UPSTREAM.ip6tables)}' | ${IP6TABLES.restore} -w 5 --noflush --counters`,
    ...jumps(UPSTREAM.iptables, IPTABLES.iptables),
    ...jumps(UPSTREAM.ip6tables, IP6TABLES.iptables),
  ];
  const script = commands.map((c) => `if ! ${c} >/dev/null 2>&1; then echo ${JSON.stringify(c.slice(0, 120))}; fi`).join('\n');
  const out = await ns.exec('sh', ['-c', script]);
  return { failed: out.split('\n').filter(Boolean) };
}
