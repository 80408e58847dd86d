/**
 * Services + EndpointSlices → the iptables rules wanted, as
 * iptables-restore input, for kube-proxy's IPVS-mode chains (the rest of
 * the mapping: controller-mapping.test.ts).
 */
import t from 'tap';
import { defaultProxyConfig } from '../../lib/kubernetes/model.js';
import { desiredState } from '../../lib/desired/known-objects.js';
import { service } from '../support/k8s-objects.js';
import { clusterIPWeb, lbWithRanges, nodeA, webSlice } from '../support/mapping-fixtures.js';

t.test('iptables for one ClusterIP service (defaults: no local detector, so src,dst masquerade)', async (t) => {
  const desired = desiredState({ services: [clusterIPWeb], endpointSlices: [webSlice] }, nodeA, defaultProxyConfig());
  t.equal(
    desired.iptables.get('inet'),
    [
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-POSTROUTING - [0:0]',
      ':KUBE-NODE-PORT - [0:0]',
      ':KUBE-LOAD-BALANCER - [0:0]',
      ':KUBE-MARK-MASQ - [0:0]',
      '-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN',
      '-A KUBE-POSTROUTING -m comment --comment "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose" -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE',
      '-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP src,dst -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT',
      '-A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT',
      '-A KUBE-POSTROUTING -m mark ! --mark 0x00004000/0x00004000 -j RETURN',
      '-A KUBE-POSTROUTING -j MARK --xor-mark 0x00004000',
      '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
      '-A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000',
      'COMMIT',
      '*filter',
      ':KUBE-FORWARD - [0:0]',
      ':KUBE-NODE-PORT - [0:0]',
      ':KUBE-PROXY-FIREWALL - [0:0]',
      ':KUBE-SOURCE-RANGES-FIREWALL - [0:0]',
      ':KUBE-IPVS-FILTER - [0:0]',
      ':KUBE-IPVS-OUT-FILTER - [0:0]',
      '-A KUBE-SOURCE-RANGES-FIREWALL -j DROP',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x00004000/0x00004000 -j ACCEPT',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      '-A KUBE-NODE-PORT -m comment --comment "Kubernetes health check node port" -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j ACCEPT',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-LOAD-BALANCER dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP-LOCAL dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT',
      'COMMIT',
      '',
    ].join('\n'),
  );
});

t.test('iptables for a LoadBalancer with source ranges excluding the node, --cluster-cidr, masquerade bit 15', async (t) => {
  const desired = desiredState(
    { services: [lbWithRanges(['203.0.113.0/24'])], endpointSlices: [] },
    nodeA,
    defaultProxyConfig({ clusterCIDRs: ['10.244.0.0/16'], masqueradeBit: 15, randomFully: false }),
  );
  t.equal(
    desired.iptables.get('inet'),
    [
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-POSTROUTING - [0:0]',
      ':KUBE-NODE-PORT - [0:0]',
      ':KUBE-LOAD-BALANCER - [0:0]',
      ':KUBE-MARK-MASQ - [0:0]',
      '-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN',
      '-A KUBE-SERVICES -m comment --comment "Kubernetes service lb portal" -m set --match-set KUBE-LOAD-BALANCER dst,dst -j KUBE-LOAD-BALANCER',
      '-A KUBE-NODE-PORT -p tcp -m comment --comment "Kubernetes nodeport TCP port for masquerade purpose" -m set --match-set KUBE-NODE-PORT-TCP dst -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT',
      '-A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT',
      '-A KUBE-SERVICES -m set --match-set KUBE-LOAD-BALANCER dst,dst -j ACCEPT',
      '-A KUBE-POSTROUTING -m mark ! --mark 0x00008000/0x00008000 -j RETURN',
      '-A KUBE-POSTROUTING -j MARK --xor-mark 0x00008000',
      '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE',
      '-A KUBE-MARK-MASQ -j MARK --or-mark 0x00008000',
      'COMMIT',
      '*filter',
      ':KUBE-FORWARD - [0:0]',
      ':KUBE-NODE-PORT - [0:0]',
      ':KUBE-PROXY-FIREWALL - [0:0]',
      ':KUBE-SOURCE-RANGES-FIREWALL - [0:0]',
      ':KUBE-IPVS-FILTER - [0:0]',
      ':KUBE-IPVS-OUT-FILTER - [0:0]',
      '-A KUBE-PROXY-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port for load balancer with sourceRange" -m set --match-set KUBE-LOAD-BALANCER-FW dst,dst -j KUBE-SOURCE-RANGES-FIREWALL',
      '-A KUBE-SOURCE-RANGES-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port + source cidr for packet filter purpose" -m set --match-set KUBE-LOAD-BALANCER-SOURCE-CIDR dst,dst,src -j RETURN',
      '-A KUBE-SOURCE-RANGES-FIREWALL -j DROP',
      '-A KUBE-IPVS-OUT-FILTER -s 192.0.2.100 -m ipvs --vaddr 192.0.2.100 --vproto tcp --vport 443 -j DROP',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x00008000/0x00008000 -j ACCEPT',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      '-A KUBE-NODE-PORT -m comment --comment "Kubernetes health check node port" -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j ACCEPT',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-LOAD-BALANCER dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP-LOCAL dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT',
      'COMMIT',
      '',
    ].join('\n'),
  );
});

t.test('iptables: --masquerade-all, externalIPs and IPv6 loopback', async (t) => {
  const desired = desiredState(
    { services: [service('web', { clusterIP: 'fd00:96::10', externalIPs: ['2001:db8::10'], ports: [{ name: 'http', port: 80 }] })], endpointSlices: [] },
    { name: 'node-a', addresses: ['fd00:1::10'] },
    defaultProxyConfig({ masqueradeAll: true }),
  );
  const nat = desired.iptables.get('inet6')!.split('COMMIT')[0];
  t.match(nat, '-A KUBE-SERVICES -s ::1/128 -j RETURN');
  t.match(nat, '-m set --match-set KUBE-6-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ');
  t.match(nat, '-m set --match-set KUBE-6-EXTERNAL-IP dst,dst -j KUBE-MARK-MASQ\n');
  t.match(nat, '-m set --match-set KUBE-6-EXTERNAL-IP dst,dst -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT\n');
  t.match(nat, '-m set --match-set KUBE-6-EXTERNAL-IP dst,dst -m addrtype --dst-type LOCAL -j ACCEPT\n');
  t.equal(desired.iptables.get('inet'), undefined);
});
