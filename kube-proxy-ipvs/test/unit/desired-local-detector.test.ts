/**
 * --detect-local-mode: which traffic to a ClusterIP is masqueraded, per
 * mode and family, in the iptables rules (kube-proxy's KUBE-CLUSTER-IP
 * rule with the local detector's IfNotLocal()) and in the nftables
 * backend's table (the same decision, as nft compiles it).
 */
import { formatRule } from 'ipvs-netlink';
import t from 'tap';
import { KnownObjects } from '../../lib/desired/known-objects.js';
import { nodeInfoOf } from '../../lib/kubernetes/node.js';
import { defaultProxyConfig, type DetectLocalMode, type NodeInfo, type ProxyConfig } from '../../lib/kubernetes/model.js';
import { planOutput } from '../../lib/plan/plan-json.js';
import { defaultOptions, proxyConfigOf } from '../../lib/proxy/options.js';
import { service } from '../support/k8s-objects.js';

const dualStack = service('web', {
  type: 'ClusterIP',
  clusterIP: '10.96.0.10',
  clusterIPs: ['10.96.0.10', 'fd00:96::10'],
  ipFamilies: ['IPv4', 'IPv6'],
  ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
});

const node = (podCIDRs?: string[]): NodeInfo => ({ name: 'node-a', addresses: ['192.168.1.10', 'fd00::10'], families: ['inet', 'inet6'], ...(podCIDRs ? { podCIDRs } : {}) });

const modes = (mode: DetectLocalMode, o: Partial<ProxyConfig> = {}): ProxyConfig =>
  defaultProxyConfig({ detectLocalMode: mode, detectLocal: { bridgeInterface: 'cbr0', interfaceNamePrefix: 'veth' }, clusterCIDRs: ['10.244.0.0/16', 'fd00:244::/56'], ...o });

/** The KUBE-CLUSTER-IP masquerade rule of each family, as iptables-restore gets it. */
function iptablesRule(config: ProxyConfig, podCIDRs?: string[]): Record<string, string | undefined> {
  const known = new KnownObjects(node(podCIDRs), config);
  known.upsertService(dualStack);
  const rule = (family: 'inet' | 'inet6') =>
    known.desired.iptables
      .get(family)!
      .split('\n')
      .find((l) => l.includes('-j KUBE-MARK-MASQ') && /--match-set KUBE-(6-)?CLUSTER-IP /.test(l))
      ?.replace(/^.* --match-set /, '');
  return { inet: rule('inet'), inet6: rule('inet6') };
}

/** The same rule in the nftables backend's table of each family, as nft lists it. */
function nftRule(config: ProxyConfig, podCIDRs?: string[]): Record<string, string | undefined> {
  const known = new KnownObjects(node(podCIDRs), { ...config, rulesBackend: 'nftables' });
  const tables = planOutput(known.desired, formatRule).nftables!;
  const rule = (table: string) => tables[table].chains.services.rules.find((r) => r.includes('@cluster-ip') && r.endsWith('jump mark-for-masquerade'));
  return { inet: rule('ip kube-proxy-ipvs'), inet6: rule('ip6 kube-proxy-ipvs') };
}

t.test('ClusterCIDR: not from the family\'s cluster CIDR; a family without one masquerades VIP-sourced traffic only', async (t) => {
  t.same(iptablesRule(modes('ClusterCIDR')), {
    inet: 'KUBE-CLUSTER-IP dst,dst ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ',
    inet6: 'KUBE-6-CLUSTER-IP dst,dst ! -s fd00:244::/56 -j KUBE-MARK-MASQ',
  });
  t.same(iptablesRule(modes('ClusterCIDR', { clusterCIDRs: ['10.244.0.0/16'] })), {
    inet: 'KUBE-CLUSTER-IP dst,dst ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ',
    inet6: 'KUBE-6-CLUSTER-IP src,dst -j KUBE-MARK-MASQ',
  });
  t.same(iptablesRule(modes('ClusterCIDR'), ['10.1.0.0/24']).inet, 'KUBE-CLUSTER-IP dst,dst ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ', "the Node's pod CIDRs are not this mode's");
});

t.test("NodeCIDR: not from the Node's pod CIDR of the family; never the cluster CIDR", async (t) => {
  t.same(iptablesRule(modes('NodeCIDR'), ['10.244.1.0/24', 'fd00:244:0:1::/64']), {
    inet: 'KUBE-CLUSTER-IP dst,dst ! -s 10.244.1.0/24 -j KUBE-MARK-MASQ',
    inet6: 'KUBE-6-CLUSTER-IP dst,dst ! -s fd00:244:0:1::/64 -j KUBE-MARK-MASQ',
  });
  t.same(iptablesRule(modes('NodeCIDR'), ['10.244.1.0/24']), {
    inet: 'KUBE-CLUSTER-IP dst,dst ! -s 10.244.1.0/24 -j KUBE-MARK-MASQ',
    inet6: 'KUBE-6-CLUSTER-IP src,dst -j KUBE-MARK-MASQ',
  }, 'a family without a pod CIDR has no detector');
  t.same(iptablesRule(modes('NodeCIDR')), {
    inet: 'KUBE-CLUSTER-IP src,dst -j KUBE-MARK-MASQ',
    inet6: 'KUBE-6-CLUSTER-IP src,dst -j KUBE-MARK-MASQ',
  }, 'no pod CIDR at all: no detector, whatever --cluster-cidr says');
  t.same(iptablesRule(modes('NodeCIDR'), ['bogus', '10.244.1.7/24']).inet, 'KUBE-CLUSTER-IP dst,dst ! -s 10.244.1.0/24 -j KUBE-MARK-MASQ', 'a range that does not parse is skipped; the first that does is written as its network');
});

t.test('BridgeInterface and InterfaceNamePrefix: not in through the pods\' interfaces, both families', async (t) => {
  t.same(iptablesRule(modes('BridgeInterface')), {
    inet: 'KUBE-CLUSTER-IP dst,dst ! -i cbr0 -j KUBE-MARK-MASQ',
    inet6: 'KUBE-6-CLUSTER-IP dst,dst ! -i cbr0 -j KUBE-MARK-MASQ',
  });
  t.same(iptablesRule(modes('InterfaceNamePrefix')), {
    inet: 'KUBE-CLUSTER-IP dst,dst ! -i veth+ -j KUBE-MARK-MASQ',
    inet6: 'KUBE-6-CLUSTER-IP dst,dst ! -i veth+ -j KUBE-MARK-MASQ',
  });
});

t.test('--masquerade-all wins over every mode', async (t) => {
  for (const mode of ['ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix'] as const) {
    t.same(iptablesRule(modes(mode, { masqueradeAll: true }), ['10.244.1.0/24']), {
      inet: 'KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ',
      inet6: 'KUBE-6-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ',
    }, mode);
  }
});

t.test('the nftables backend makes the same decision', async (t) => {
  const set = (fam: string) => `${fam} daddr . meta l4proto . th dport @cluster-ip`;
  t.same(nftRule(modes('ClusterCIDR', { clusterCIDRs: ['10.244.0.0/16'] })), {
    inet: `${set('ip')} ip saddr != 10.244.0.0/16 jump mark-for-masquerade`,
    inet6: 'ip6 saddr . meta l4proto . th dport @cluster-ip jump mark-for-masquerade',
  });
  t.same(nftRule(modes('NodeCIDR'), ['10.244.1.0/24', 'fd00:244:0:1::/64']), {
    inet: `${set('ip')} ip saddr != 10.244.1.0/24 jump mark-for-masquerade`,
    inet6: `${set('ip6')} ip6 saddr != fd00:244:0:1::/64 jump mark-for-masquerade`,
  });
  t.same(nftRule(modes('BridgeInterface')), {
    inet: `${set('ip')} iifname != "cbr0" jump mark-for-masquerade`,
    inet6: `${set('ip6')} iifname != "cbr0" jump mark-for-masquerade`,
  });
  t.same(nftRule(modes('InterfaceNamePrefix')), {
    inet: `${set('ip')} iifname != "veth*" jump mark-for-masquerade`,
    inet6: `${set('ip6')} iifname != "veth*" jump mark-for-masquerade`,
  });
  const a = new KnownObjects(node(['10.244.1.0/24']), modes('NodeCIDR', { rulesBackend: 'nftables' })).desired.nftables!.get('inet')!.fingerprint;
  const b = new KnownObjects(node(['10.244.2.0/24']), modes('NodeCIDR', { rulesBackend: 'nftables' })).desired.nftables!.get('inet')!.fingerprint;
  t.not(a, b, 'another pod CIDR is another table shape: the planner replaces the table');
});

t.test('the options reach the rules: proxyConfigOf carries the mode and interfaces; the Node its pod CIDRs', async (t) => {
  const config = proxyConfigOf({ ...defaultOptions(), detectLocalMode: 'InterfaceNamePrefix', detectLocal: { bridgeInterface: '', interfaceNamePrefix: 'cali' } });
  t.equal(iptablesRule(config).inet, 'KUBE-CLUSTER-IP dst,dst ! -i cali+ -j KUBE-MARK-MASQ');
  t.equal(defaultProxyConfig().detectLocalMode, 'ClusterCIDR', "upstream's default mode");
  const info = nodeInfoOf('node-a', { metadata: { name: 'node-a' }, spec: { podCIDRs: ['10.244.1.0/24', 'fd00:244:0:1::/64'] } }, undefined);
  t.same(info.podCIDRs, ['10.244.1.0/24', 'fd00:244:0:1::/64']);
  t.notOk('podCIDRs' in nodeInfoOf('node-a', { metadata: { name: 'node-a' } }, undefined), 'a Node without ranges adds none');
});
