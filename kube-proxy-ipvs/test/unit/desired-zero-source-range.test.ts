/**
 * A loadBalancerSourceRanges entry of prefix 0 (0.0.0.0/0, ::/0) lets every
 * source in, as kube-proxy reads it since 1.34: that family of the Service
 * has no firewall at all (no KUBE-LOAD-BALANCER-FW entry, no source
 * ranges, no KUBE-IPVS-OUT-FILTER drop), rather than a /0 entry an ipset
 * refuses; other Services' ranges are untouched.
 */
import t from 'tap';
import { KnownObjects } from '../../lib/desired/known-objects.js';
import { defaultProxyConfig, type NodeInfo } from '../../lib/kubernetes/model.js';
import { service } from '../support/k8s-objects.js';

const node: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10'] };

function loadBalancer(name: string, clusterIP: string, vip: string, ranges: string[]) {
  return service(
    name,
    { type: 'LoadBalancer', clusterIP, ports: [{ name: 'p', protocol: 'TCP', port: 80, nodePort: 30000 + Number(clusterIP.split('.')[3]) }], loadBalancerSourceRanges: ranges },
    { loadBalancer: { ingress: [{ ip: vip }] } },
  );
}

const entries = (state: KnownObjects, set: string) => [...(state.desired.ipsets.get(set)?.entries ?? [])].sort();

t.test("a /0 range opens that Service's load balancer to every source; others keep their ranges", async (t) => {
  const state = new KnownObjects(node, defaultProxyConfig());
  state.upsertService(loadBalancer('open', '10.96.0.1', '192.0.2.1', ['0.0.0.0/0']));
  state.upsertService(loadBalancer('open-too', '10.96.0.4', '192.0.2.4', ['10.0.0.0/8', '0.0.0.0/0']));
  state.upsertService(loadBalancer('narrow', '10.96.0.2', '192.0.2.2', ['10.0.0.0/8', '172.16.0.0/12']));
  t.same(entries(state, 'KUBE-LOAD-BALANCER-FW'), ['192.0.2.2,tcp:80'], 'only the narrow one is firewalled');
  t.same(entries(state, 'KUBE-LOAD-BALANCER-SOURCE-CIDR'), ['192.0.2.2,tcp:80,10.0.0.0/8', '192.0.2.2,tcp:80,172.16.0.0/12']);
  t.same(entries(state, 'KUBE-LOAD-BALANCER'), ['192.0.2.1,tcp:80', '192.0.2.2,tcp:80', '192.0.2.4,tcp:80'], 'all three are load balancers still');
  const rules = state.desired.iptables.get('inet') ?? '';
  t.match(rules, /KUBE-IPVS-OUT-FILTER.*192\.0\.2\.2/, 'the narrow one keeps the node out (its ranges leave the node out)');
  t.notMatch(rules, /192\.0\.2\.[14]/, 'no drop for the node for the open ones');
});
