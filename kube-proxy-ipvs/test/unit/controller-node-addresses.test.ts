/**
 * The node's addresses as kube-proxy's IPVS mode takes them
 * (GetAllLocalAddressesExcept(kube-ipvs0), narrowed by
 * --nodeport-addresses): from the interfaces when the controller has read
 * them, from the Node object / --bind-address otherwise (the plan command).
 */
import t from 'tap';
import { defaultProxyConfig, type NodeInfo } from '../../lib/kubernetes/model.js';
import { narrowNodePortIPs, nodeContext, usableLocalAddresses } from '../../lib/desired/node-addresses.js';
import { desiredState, KnownObjects } from '../../lib/desired/known-objects.js';
import { service } from '../support/k8s-objects.js';

const dualStack: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10', 'fd00:1::10'] };
/** What a node's interfaces (kube-ipvs0 left out by the reader) typically hold. */
const interfaces = ['127.0.0.1', '::1', '192.168.1.10', '10.0.0.10', '169.254.3.4', 'fe80::1c2b:3cff:fe4d:5e6f', 'fd00:1::10', '2001:db8::7'];

t.test('loopback and IPv6 link-local are never node addresses; IPv4 link-local is (isValidForSet)', async (t) => {
  t.same(usableLocalAddresses(interfaces), ['192.168.1.10', '10.0.0.10', '169.254.3.4', 'fd00:1::10', '2001:db8::7']);
});

t.test('from the interfaces: every usable address of each served family serves NodePorts', async (t) => {
  const ctx = nodeContext(dualStack, defaultProxyConfig(), interfaces);
  t.same(ctx.families, ['inet', 'inet6'], 'the families come from the declared node addresses');
  t.same(ctx.nodePortIPs.get('inet'), ['192.168.1.10', '10.0.0.10', '169.254.3.4']);
  t.same(ctx.nodePortIPs.get('inet6'), ['fd00:1::10', '2001:db8::7']);
  t.same(ctx.primaryIP.get('inet'), '192.168.1.10', 'the primary is the declared one');
  t.same([...ctx.localAddresses].sort(), ['10.0.0.10', '169.254.3.4', '192.168.1.10', '2001:db8::7', 'fd00:1::10']);
});

t.test('an IPv4-only node ignores the IPv6 addresses its interfaces have', async (t) => {
  const ctx = nodeContext({ name: 'node-a', addresses: ['192.168.1.10'] }, defaultProxyConfig(), interfaces);
  t.same(ctx.families, ['inet']);
  t.same([...ctx.nodePortIPs.keys()], ['inet']);
});

t.test('--nodeport-addresses narrows per family; a family without a CIDR keeps all', async (t) => {
  const ctx = nodeContext(dualStack, defaultProxyConfig({ nodePortAddresses: ['10.0.0.0/8'] }), interfaces);
  t.same(ctx.nodePortIPs.get('inet'), ['10.0.0.10']);
  t.same(ctx.nodePortIPs.get('inet6'), ['fd00:1::10', '2001:db8::7'], 'no IPv6 CIDR given: all IPv6 addresses');
  t.same([...ctx.localAddresses].length, 5, '"already local" is not narrowed');
});

t.test('--nodeport-addresses primary: the declared primary of each family, if an interface has it', async (t) => {
  t.same(nodeContext(dualStack, defaultProxyConfig({ nodePortAddresses: ['primary'] }), interfaces).nodePortIPs, new Map([['inet', ['192.168.1.10']], ['inet6', ['fd00:1::10']]]));
  t.same(nodeContext(dualStack, defaultProxyConfig({ nodePortAddresses: ['primary'] }), ['10.0.0.10']).nodePortIPs.get('inet'), [], 'not on any interface: none');
  t.same(narrowNodePortIPs(['192.168.1.10', '10.0.0.10'], 'inet', '192.168.1.10', ['primary', '10.0.0.0/24']), ['192.168.1.10', '10.0.0.10'], 'primary and CIDRs add up');
  t.same(narrowNodePortIPs(['192.168.1.10'], 'inet', '192.168.1.10', ['fd00::/8']), ['192.168.1.10'], 'a CIDR of the other family does not narrow this one');
});

t.test('a bad CIDR in --nodeport-addresses is a TypeError naming it', async (t) => {
  t.throws(() => nodeContext(dualStack, defaultProxyConfig({ nodePortAddresses: ['10.0.0.0/40'] }), interfaces), { name: 'TypeError', message: /nodePortAddresses\[0\]/ });
});

t.test('without interfaces (the plan command), the declared addresses stand in, loopback excluded', async (t) => {
  const ctx = nodeContext({ name: 'node-a', addresses: ['127.0.0.1', '192.168.1.10', ' 10.0.0.10 '] }, defaultProxyConfig());
  t.same(ctx.nodePortIPs.get('inet'), ['192.168.1.10', '10.0.0.10']);
  t.same(ctx.primaryIP.get('inet'), '127.0.0.1', 'the first declared address is the primary, as given');
});

const nodePortWithExternalIP = service('web', {
  type: 'NodePort',
  clusterIP: '10.96.0.20',
  externalIPs: ['10.0.0.10', '203.0.113.10'],
  ports: [{ name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 }],
});

t.test('the mapping uses the interface addresses: NodePort virtual servers and "already local" external IPs', async (t) => {
  const state = new KnownObjects({ name: 'node-a', addresses: ['192.168.1.10'] }, defaultProxyConfig(), ['127.0.0.1', '192.168.1.10', '10.0.0.10']);
  state.upsertService(nodePortWithExternalIP);
  const vips = [...state.desired.virtualServers.values()].map((v) => `${v.service.address}:${v.service.port}`).sort();
  t.same(vips, ['10.0.0.10:30080', '10.0.0.10:80', '10.96.0.20:80', '192.168.1.10:30080', '203.0.113.10:80'], 'a NodePort virtual server per interface address (not loopback)');
  t.same([...state.desired.boundAddresses].sort(), ['10.96.0.20', '203.0.113.10'], 'the externalIP on an interface is not bound to kube-ipvs0');

  // The same objects planned from the declared addresses alone: 10.0.0.10 is not a node address there.
  const planned = desiredState({ services: [nodePortWithExternalIP], endpointSlices: [] }, { name: 'node-a', addresses: ['192.168.1.10'] }, defaultProxyConfig());
  t.same([...planned.boundAddresses].sort(), ['10.0.0.10', '10.96.0.20', '203.0.113.10'], 'the plan command binds it: it only knows the declared addresses');

  state.reset({ name: 'node-a', addresses: ['192.168.1.10'] }, defaultProxyConfig(), ['192.168.1.10']);
  t.same([...state.desired.virtualServers.keys()].filter((k) => k.endsWith('/30080')), ['tcp/192.168.1.10/30080'], 'an address gone from the interfaces loses its NodePort virtual server on reset');
});

t.test('ipsetMaxElem sizes the named hash set only; a bad value is a RangeError naming the set', async (t) => {
  const state = new KnownObjects({ name: 'node-a', addresses: ['192.168.1.10'] }, defaultProxyConfig({ ipsetMaxElem: { 'KUBE-CLUSTER-IP': 8 } }));
  t.same(state.desired.ipsets.get('KUBE-CLUSTER-IP')!.options, { family: 'inet', hashSize: 1024, maxElem: 8 });
  t.same(state.desired.ipsets.get('KUBE-IPVS-IPS')!.options, { family: 'inet', hashSize: 1024, maxElem: 65536 }, "kube-proxy's default elsewhere");
  t.throws(() => new KnownObjects({ name: 'n', addresses: ['192.168.1.10'] }, defaultProxyConfig({ ipsetMaxElem: { 'KUBE-CLUSTER-IP': 0 } })), {
    name: 'RangeError',
    message: /ipsetMaxElem\[KUBE-CLUSTER-IP\]/,
  });
});
