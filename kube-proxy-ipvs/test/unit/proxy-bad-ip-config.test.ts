/**
 * kube-proxy's checkBadConfig and checkBadIPConfig at start: settings of
 * the other family than the node's primary one are logged with upstream's
 * texts, and the two upstream has always refused end the start.
 */
import pino from 'pino';
import t from 'tap';
import type { Node } from '../../lib/kubernetes/model.js';
import { startingNode } from '../../lib/proxy/node-ips.js';
import { resolveOptions } from '../../lib/proxy/resolve-options.js';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines };
}
const node = (address: string, podCIDRs?: string[]): Node =>
  ({ metadata: { name: 'n1' }, status: { addresses: [{ type: 'InternalIP', address }] }, ...(podCIDRs ? { spec: { podCIDRs } } : {}) }) as unknown as Node;
const v4only = { families: ['inet' as const], missing: [] };
const dual = { families: ['inet' as const, 'inet6' as const], missing: [] };
const opts = (...argv: string[]) => resolveOptions(['--hostname-override=n1', ...argv]).options;
const errors = (lines: Array<Record<string, unknown>>) => lines.filter((l) => l.msg === 'Kube-proxy configuration may be incomplete or incorrect').map((l) => l.err);

t.test('ClusterCIDR with only other-family clusterCIDRs on a single-stack host is fatal', async (t) => {
  const { log } = capture();
  t.throws(
    () => startingNode(opts('--cluster-cidr=fd00:10::/64', '--nodeport-addresses=primary'), node('10.0.0.1'), v4only, log),
    /^kube-proxy configuration is incorrect: cluster is IPv4-only but clusterCIDRs contains only IPv6 addresses$/,
  );
});

t.test('the same on a dual-stack host, or in another mode, is logged', async (t) => {
  const a = capture();
  startingNode(opts('--cluster-cidr=fd00:10::/64', '--nodeport-addresses=primary'), node('10.0.0.1'), dual, a.log);
  t.same(errors(a.lines), ['cluster is IPv4-primary but clusterCIDRs contains only IPv6 addresses']);
  const b = capture();
  startingNode(opts('--cluster-cidr=fd00:10::/64', '--detect-local-mode=InterfaceNamePrefix', '--pod-interface-name-prefix=veth', '--nodeport-addresses=primary'), node('10.0.0.1'), v4only, b.log);
  t.same(errors(b.lines), ['cluster is IPv4-only but clusterCIDRs contains only IPv6 addresses']);
});

t.test('NodeCIDR with only other-family podCIDRs is fatal', async (t) => {
  const { log } = capture();
  t.throws(
    () => startingNode(opts('--detect-local-mode=NodeCIDR', '--nodeport-addresses=primary'), node('10.0.0.1', ['fd00:1::/64']), dual, log),
    /^kube-proxy configuration is incorrect: cluster is IPv4-primary but node.spec.podCIDRs contains only IPv6 addresses$/,
  );
});

t.test('NodeCIDR mode with a clusterCIDR that is no CIDR starts, as upstream (the value is not checked in that mode)', async (t) => {
  const { log, lines } = capture();
  const info = startingNode(opts('--detect-local-mode=NodeCIDR', '--cluster-cidr=garbage', '--nodeport-addresses=primary'), node('10.0.0.1', ['10.244.1.0/24']), v4only, log);
  t.same(info.podCIDRs, ['10.244.1.0/24']);
  t.same(errors(lines), [], 'a value of no family is of no other family either');
});

t.test('checkBadConfig: nodePortAddresses', async (t) => {
  const a = capture();
  startingNode(opts('--cluster-cidr=10.244.0.0/16'), node('10.0.0.1'), v4only, a.log);
  t.same(errors(a.lines), ['nodePortAddresses is unset; NodePort connections will be accepted on all local IPs. Consider using `--nodeport-addresses primary`']);
  const b = capture();
  startingNode(opts('--cluster-cidr=10.244.0.0/16,fd00:10::/64', '--nodeport-addresses=10.0.0.0/8'), node('10.0.0.1'), dual, b.log);
  t.same(errors(b.lines), ['cluster appears to be dual-stack but nodePortAddresses contains only IPv4 addresses; NodePort connections will be accepted on all local IPv6 IPs']);
  const c = capture();
  startingNode(opts('--nodeport-addresses=fd00::/8'), node('10.0.0.1'), dual, c.log);
  t.same(errors(c.lines), ['cluster appears to be IPv4-primary but nodePortAddresses contains only IPv6 addresses; NodePort connections will be accepted on all local IPv4 IPs']);
  const d = capture();
  startingNode(opts('--cluster-cidr=10.244.0.0/16', '--nodeport-addresses=primary'), node('10.0.0.1'), v4only, d.log);
  t.same(errors(d.lines), [], 'a consistent single-stack setting logs nothing');
});

t.test('single-stack only: excludeCIDRs and bind addresses of the other family, reported together', async (t) => {
  const a = capture();
  startingNode(opts('--ipvs-exclude-cidrs=fd00:5::/64', '--metrics-bind-address=[fd00::1]:10249', '--nodeport-addresses=primary'), node('10.0.0.1'), v4only, a.log);
  t.same(errors(a.lines), ['[cluster is IPv4-only but ipvs.excludeCIDRs contains only IPv6 addresses, cluster is IPv4-only but metricsBindAddress is IPv6]']);
  const b = capture();
  startingNode(opts('--ipvs-exclude-cidrs=fd00:5::/64', '--metrics-bind-address=[::]:10249', '--nodeport-addresses=primary'), node('10.0.0.1'), dual, b.log);
  t.same(errors(b.lines), []);
});

t.test('addresses read as upstream reads them (ParseIPSloppy): a leading-zero address has its family; 000.0.0.0 is unspecified', async (t) => {
  // An IPv6 node, single-stack: an IPv4 bind address is of the wrong family.
  const v6only = { families: ['inet6' as const], missing: [] };
  const a = capture();
  startingNode(opts('--metrics-bind-address=010.1.2.3:10249', '--healthz-bind-address=000.0.0.0:10256', '--nodeport-addresses=primary'), node('fd00::1'), v6only, a.log);
  t.same(errors(a.lines), ['cluster is IPv6-only but metricsBindAddress is IPv4']);
});
