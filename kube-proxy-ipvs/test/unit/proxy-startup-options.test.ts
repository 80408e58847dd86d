/**
 * Start-up options as kube-proxy takes them: the node name from
 * hostnameOverride (GetHostname: trimmed, lower-cased, blank refused, from
 * the file as from the flag), clusterCIDR checked only for the ClusterCIDR
 * detector and only as a single CIDR or a dual-stack pair, the healthz and
 * metrics addresses as IP:port with a port from 1 to 65535, the
 * nodePortAddresses keywords, and --proxy-port-range gone.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { narrowNodePortIPs } from '../../lib/desired/node-addresses.js';
import { KUBERNETES_VERSION } from '../../lib/proxy/build-info.js';
import { defaultOptions } from '../../lib/proxy/options.js';
import { resolveOptions } from '../../lib/proxy/resolve-options.js';
import { healthCheckHosts } from '../../lib/proxy/service-health.js';
import { scratchDir } from '../support/scratch.js';

const parse = (...argv: string[]) => resolveOptions(argv).options;
const HEAD = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n';

function configFile(body: string): string {
  const file = join(scratchDir('kpstart-'), 'c.yaml');
  writeFileSync(file, HEAD + body);
  return file;
}

t.test('hostnameOverride from the file is trimmed and lower-cased, as GetHostname', async (t) => {
  const r = resolveOptions(['--config', configFile('hostnameOverride: " Node-A "\n')]);
  t.equal(r.options.hostnameOverride, 'node-a', 'the Node looked for is node-a');
  t.equal(r.config.hostnameOverride, ' Node-A ', '/configz shows the field as written');
  t.throws(() => resolveOptions(['--config', configFile('hostnameOverride: "   "\n')]), /empty hostname is invalid/);
  t.doesNotThrow(() => resolveOptions(['--config', configFile('hostnameOverride: "   "\n'), '--cleanup']), '--cleanup exits before upstream asks for the node name');
  t.equal(parse('--hostname-override', ' Node-B ').hostnameOverride, 'node-b', 'the flag as before');
});

t.test('clusterCIDR: one CIDR or a dual-stack pair, checked for the ClusterCIDR detector only', async (t) => {
  t.same(parse('--cluster-cidr=10.244.0.0/16,fd00:244::/56').clusterCIDRs, ['10.244.0.0/16', 'fd00:244::/56']);
  t.throws(() => parse('--cluster-cidr=10.0.0.0/8,10.1.0.0/16'), /--cluster-cidr \(clusterCIDR\): Invalid value: "10.0.0.0\/8,10.1.0.0\/16": must be a either a single CIDR or dual-stack pair of CIDRs/, 'two of one family');
  t.throws(() => parse('--cluster-cidr=10.0.0.0/8,fd00::/48,10.1.0.0/16'), /must be a either a single CIDR or dual-stack pair of CIDRs/, 'three');
  t.throws(() => parse('--cluster-cidr=10.0.0.0/8, fd00::/48'), /--cluster-cidr \(clusterCIDR\): Invalid value: " fd00::\/48": must be a valid CIDR block \(e.g. 10.100.0.0\/16 or fde4:8dba:82e1::\/48\)/, 'no trimming');
  t.throws(() => parse('--cluster-cidr=10.0.0.0/8,'), /Invalid value: "": must be a valid CIDR block/, 'an empty item');
  t.throws(() => resolveOptions(['--config', configFile('clusterCIDR: "10.0.0.0/8,10.1.0.0/16"\n')]), /must be a either a single CIDR or dual-stack pair/, 'from the file too');
  const other = parse('--detect-local-mode=InterfaceNamePrefix', '--pod-interface-name-prefix=veth', '--cluster-cidr=10.0.0.0/8,10.1.0.0/16');
  t.equal(other.detectLocalMode, 'InterfaceNamePrefix', 'another detector: clusterCIDR is not used, so not checked');
  t.same(parse('--detect-local-mode=NodeCIDR', '--cluster-cidr=garbage').clusterCIDRs, ['garbage'], 'NodeCIDR mode: an unchecked value that is no CIDR is kept as written, and the start goes on');
  t.same(parse('--detect-local-mode=NodeCIDR', '--cluster-cidr=010.0.0.0/8,garbage').clusterCIDRs, ['10.0.0.0/8', 'garbage'], 'a leading-zero CIDR beside it still reads as upstream reads it');
});

t.test('healthz and metrics addresses: IP:port, port 1 to 65535', async (t) => {
  t.throws(() => parse('--healthz-bind-address=127.0.0.1:0'), /--healthz-bind-address \(healthzBindAddress\): Invalid value: "0": must be a valid port/);
  t.throws(() => parse('--metrics-bind-address=[::1]:0'), /--metrics-bind-address \(metricsBindAddress\): Invalid value: "0": must be a valid port/);
  t.throws(() => resolveOptions(['--config', configFile('healthzBindAddress: ":10256"\n')]), /--healthz-bind-address \(healthzBindAddress\): Invalid value: "": must be a valid IP/, 'an empty host');
  t.throws(() => resolveOptions(['--config', configFile('metricsBindAddress: "127.0.0.1:65536"\n')]), /Invalid value: "65536": must be a valid port/);
  t.throws(() => resolveOptions(['--config', configFile('metricsBindAddress: "::1:10249"\n')]), /Invalid value: "::1:10249": must be IP:port/, 'an IPv6 host without brackets');
  t.throws(() => parse('--metrics-port=0'), /--metrics-bind-address \(metricsBindAddress\): Invalid value: "": must be IP:port/, 'metrics cannot be turned off: upstream validates it even when empty');
  t.equal(parse('--healthz-port=0').healthzBindAddress, '', 'healthz can (an empty address is not checked)');
  t.equal(parse('--metrics-bind-address=[::1]:10249').metricsBindAddress, '[::1]:10249');
});

t.test('nodePortAddresses: CIDRs and the keywords primary, localhost and all, in any combination', async (t) => {
  t.same(parse('--nodeport-addresses=primary,localhost,10.0.0.0/8,all').nodePortAddresses, ['primary', 'localhost', '10.0.0.0/8', 'all']);
  t.throws(() => parse('--nodeport-addresses=10.0.0.0/8,loopback'), /--nodeport-addresses \(nodePortAddresses\[1\]\): Invalid value: "loopback"/);
  t.throws(() => parse('--nodeport-addresses=10.0.0.0/8, 10.1.0.0/16'), /Invalid value: " 10.1.0.0\/16"/, 'no trimming');
  const usable = ['192.168.1.10', '10.0.0.10'];
  t.same(narrowNodePortIPs(usable, 'inet', '192.168.1.10', ['localhost']), [], 'localhost: loopback, which never serves NodePorts in IPVS mode');
  t.same(narrowNodePortIPs(usable, 'inet', '192.168.1.10', ['localhost', 'all']), usable, 'all: every address');
  t.same(narrowNodePortIPs(usable, 'inet', '192.168.1.10', ['10.0.0.0/8', 'primary']), ['192.168.1.10', '10.0.0.10'], 'primary with a CIDR');
  t.same(narrowNodePortIPs(['fd00::1'], 'inet6', undefined, ['localhost', '10.0.0.0/8']), [], 'localhost names ::1 for IPv6');
  const node = { name: 'node-a', addresses: ['192.168.1.10'] };
  t.same(healthCheckHosts({ ...defaultOptions(), nodePortAddresses: ['all'] }, node), ['0.0.0.0'], 'all: health check ports listen everywhere, as when unset');
});

t.test('showHiddenMetricsForVersion: omitted or the release before the one mirrored, as component-base checks it', async (t) => {
  const [, major, minor] = /^v(\d+)\.(\d+)/.exec(KUBERNETES_VERSION)!.map(Number);
  const previous = `${major}.${minor - 1}`;
  t.equal(parse(`--show-hidden-metrics-for-version=${previous}`).kubeProxyConfiguration?.showHiddenMetricsForVersion, previous, `${KUBERNETES_VERSION} mirrored: ${previous} is taken`);
  t.throws(
    () => parse(`--show-hidden-metrics-for-version=${major}.${minor - 2}`),
    new RegExp(`--show-hidden-metrics-for-version \\(showHiddenMetricsForVersion\\): Invalid value: "${major}.${minor - 2}": must be omitted or have the value '${previous}'. Only the previous minor version is allowed`),
  );
  t.throws(() => parse(`--show-hidden-metrics-for-version=${previous}.0`), /Invalid value: "\d+\.\d+\.0"/, 'no patch level');
  t.throws(() => resolveOptions(['--config', configFile(`showHiddenMetricsForVersion: "${major}.${minor}"\n`)]), /Invalid value: "\d+\.\d+"/, 'the release itself, from the file');
});

t.test('--proxy-port-range is gone (removed in kube-proxy 1.31): an unknown flag', async (t) => {
  t.throws(() => parse('--proxy-port-range=30000-32767'), /unknown flag: --proxy-port-range/);
  t.equal(resolveOptions(['--config', configFile('portRange: "30000-32767"\n')]).config.portRange, '30000-32767', 'the v1alpha1 field is still read, and ignored');
});
