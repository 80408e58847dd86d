/**
 * `plan` with --detect-local-mode: the same flags as the proxy, the Node
 * object's spec.podCIDRs for NodeCIDR, and the KUBE-CLUSTER-IP masquerade
 * rule (or the nftables rule) they make.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { runPlan } from '../../lib/cli/plan.js';
import { scratchDir } from '../support/scratch.js';

const MANIFESTS = `apiVersion: v1
kind: Node
metadata: {name: node-a}
spec: {podCIDRs: [10.244.3.0/24, 'fd00:244:0:3::/64']}
status: {addresses: [{type: InternalIP, address: 192.168.1.10}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.96.0.10, clusterIPs: [10.96.0.10, 'fd00:96::10'], ipFamilies: [IPv4, IPv6], ports: [{name: http, protocol: TCP, port: 80}]}
`;

function plan(...flags: string[]): { iptables: string; ip6tables: string; nftables?: Record<string, { chains: Record<string, { rules: string[] }> }> } {
  const dir = scratchDir('kp-plan-detect-');
  writeFileSync(join(dir, 'objects.yaml'), MANIFESTS);
  let out = '';
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
  try {
    runPlan(['--manifests', dir, '--hostname-override', 'node-a', '--cluster-cidr', '10.244.0.0/16', ...flags]);
  } finally {
    process.stdout.write = write;
  }
  return JSON.parse(out);
}

t.test('NodeCIDR takes the Node object\'s pod CIDRs, per family', async (t) => {
  const out = plan('--detect-local-mode', 'NodeCIDR');
  t.match(out.iptables, '--match-set KUBE-CLUSTER-IP dst,dst ! -s 10.244.3.0/24 -j KUBE-MARK-MASQ');
  t.match(out.ip6tables, '--match-set KUBE-6-CLUSTER-IP dst,dst ! -s fd00:244:0:3::/64 -j KUBE-MARK-MASQ');
});

t.test('the interface modes, and the nftables backend', async (t) => {
  t.match(plan('--detect-local-mode', 'BridgeInterface', '--pod-bridge-interface', 'cbr0').iptables, 'KUBE-CLUSTER-IP dst,dst ! -i cbr0 -j KUBE-MARK-MASQ');
  const nft = plan('--detect-local-mode', 'InterfaceNamePrefix', '--pod-interface-name-prefix', 'veth', '--ipvs-rules-backend', 'nftables').nftables!;
  t.ok(nft['ip kube-proxy-ipvs'].chains.services.rules.includes('ip daddr . meta l4proto . th dport @cluster-ip iifname != "veth*" jump mark-for-masquerade'));
});
