/**
 * Configuration values read as kube-proxy reads them: addresses and CIDRs
 * with leading zeros (netutils.ParseIPSloppy/ParseCIDRSloppy), in objects
 * too (the API server keeps such values of objects made before its
 * stricter checks; blank externalIPs as well), no trimming
 * where Go does not trim, component-base's logging checks, the scheduler
 * checked only when the IPVS proxier starts, and --write-config-to's
 * per-mode sync periods as upstream's v1alpha1 conversion writes them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { canonicalAddress, parseCidr } from 'ipvs-netlink/address';
import { canonicalAddressSloppy, parseCidrSloppy } from '../../lib/kubernetes/sloppy-address.js';
import { appendPortIfNeeded } from '../../lib/proxy/config-defaults.js';
import { run } from '../../lib/cli/run.js';
import { parseDuration } from '../../lib/proxy/duration.js';
import { nodeInfoFor, parseHostPort } from '../../lib/proxy/options.js';
import { resolveOptions } from '../../lib/proxy/resolve-options.js';
import { scratchDir } from '../support/scratch.js';
import { validateEndpointSlice, validateNode, validateService } from '../../lib/kubernetes/validate.js';
import { nodeInfoOf } from '../../lib/kubernetes/node.js';

const parse = (...argv: string[]) => resolveOptions(['--hostname-override=node-a', ...argv]).options;
const HEAD = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n';

function configFile(body: string): string {
  const file = join(scratchDir('kpparse-'), 'c.yaml');
  writeFileSync(file, HEAD + body);
  return file;
}

t.test('the sloppy address readers: leading zeros read as decimal, the strict ones unchanged', async (t) => {
  t.equal(canonicalAddressSloppy('010.1.2.3'), '10.1.2.3');
  t.equal(canonicalAddressSloppy('::ffff:001.002.003.004'), '1.2.3.4', 'an IPv4-mapped address is the IPv4 one, as Go\'s net.IP takes it (To4) and prints it');
  t.same(['::ffff:10.244.1.10', '::FFFF:af4:10a', '0:0:0:0:0:ffff:a00:1'].map(canonicalAddressSloppy), ['10.244.1.10', '10.244.1.10', '10.0.0.1'], 'however it is spelt');
  t.equal(canonicalAddressSloppy('64:ff9b::a00:1'), canonicalAddress('64:ff9b::a00:1'), 'other IPv6 addresses that carry an IPv4 one stay IPv6');
  t.equal(canonicalAddressSloppy('0256.1.2.3'), undefined, 'still at most 255');
  t.equal(canonicalAddressSloppy(' 10.1.2.3'), undefined, 'no white space');
  t.equal(canonicalAddress('010.1.2.3'), undefined, 'the library API stays strict');
  t.same(parseCidrSloppy('010.000.0.0/08', 'c'), { family: 'inet', network: '10.0.0.0', prefix: 8, text: '10.0.0.0/8' });
  t.throws(() => parseCidrSloppy(' 10.1.0.0/16', 'c'), TypeError, 'no white space, as Go');
  t.throws(() => parseCidr('010.0.0.0/8', 'c'), TypeError, 'the library API stays strict');
  t.equal(parseCidr(' 10.1.0.0/16', 'c').text, '10.1.0.0/16', "the library's own parseCidr still trims for its callers");
});

t.test('addresses and CIDRs with leading zeros start, and the proxy uses what they read as', async (t) => {
  const o = parse('--bind-address=010.1.2.3', '--healthz-bind-address=010.0.0.1:10256', '--metrics-bind-address=127.000.0.1:10249',
    '--ipvs-exclude-cidrs=010.0.0.0/8', '--nodeport-addresses=primary', '--cluster-cidr=010.244.0.0/16,fd00::/48');
  t.equal(o.bindAddress, '10.1.2.3');
  t.same(o.ipvs.excludeCIDRs, ['10.0.0.0/8']);
  t.same(o.clusterCIDRs, ['10.244.0.0/16', 'fd00::/48']);
  t.same(nodeInfoFor(o, undefined).addresses, ['10.1.2.3'], '--bind-address is the node IP as read');
  t.same(parseHostPort(o.healthzBindAddress), { host: '10.0.0.1', port: 10256 }, 'the server listens on the address read');
  t.same(parse('--nodeport-addresses=192.168.001.0/24').nodePortAddresses, ['192.168.1.0/24']);
  t.same(parse('--nodeport-addresses=10.1.0.0/16').nodePortAddresses, ['10.1.0.0/16'], 'a value that reads strictly is kept as written');
  t.same(nodeInfoFor(parse('--bind-address=000.000.000.000'), undefined).addresses, [], 'unspecified in any spelling is no node IP');
  const file = configFile('bindAddress: 010.1.2.3\nipvs:\n  excludeCIDRs: [010.2.0.0/16]\nclusterCIDR: 010.244.0.0/16\n');
  const f = resolveOptions(['--config', file, '--hostname-override=node-a']).options;
  t.equal(f.bindAddress, '10.1.2.3', 'from the file too');
  t.same(f.ipvs.excludeCIDRs, ['10.2.0.0/16']);
  t.same(f.clusterCIDRs, ['10.244.0.0/16']);
});

t.test('white space: list elements and durations are not trimmed, as pflag and time.ParseDuration', async (t) => {
  t.throws(() => parse('--ipvs-exclude-cidrs=10.0.0.0/8, 10.1.0.0/16'), /--ipvs-exclude-cidrs \(ipvs.excludeCIDRs\): " 10.1.0.0\/16" is not a CIDR/);
  t.throws(() => resolveOptions(['--config', configFile('ipvs:\n  excludeCIDRs: [" 10.1.0.0/16"]\n')]), /" 10.1.0.0\/16" is not a CIDR/, 'a quoted YAML value keeps its space, and is refused too');
  t.throws(() => parse('--ipvs-sync-period= 30s'), /invalid argument " 30s" for "--ipvs-sync-period" flag: time: invalid duration " 30s"/);
  t.throws(() => parseDuration('30s '), /invalid duration/);
  t.throws(() => resolveOptions(['--config', configFile('ipvs:\n  syncPeriod: " 30s"\n')]), /time: invalid duration " 30s"/);
  t.equal(parse('--ipvs-sync-period=45s').ipvs.syncPeriodMs, 45_000);
  t.equal(resolveOptions(['--config', configFile('ipvs:\n  syncPeriod:   45s  \n'), '--hostname-override=n']).options.ipvs.syncPeriodMs, 45_000, 'a plain YAML scalar carries no space');
  t.match(parse('--feature-gates= LoggingAlphaOptions = true').featureGates, { LoggingAlphaOptions: true }, '--feature-gates still trims, as cliflag.MapStringBool');
  t.match(parse('--hostname-override= Node-B ').hostnameOverride, 'node-b', '--hostname-override still trims, as upstream');
});

t.test("logging: component-base's checks, with their fields and reasons", async (t) => {
  t.throws(() => parse('--logging-format=json', '--vmodule=proxier=4'), /--vmodule \(logging.vmodule\): Forbidden: Only supported for text log format/);
  t.equal(parse('--logging-format=text', '--vmodule=proxier=4').logging.vmodule.length, 1);
  t.throws(() => parse('--log-text-split-stream'), /--log-text-split-stream \(logging.options.text.splitStream\): Forbidden: Feature LoggingAlphaOptions is disabled/);
  t.throws(() => parse('--log-json-info-buffer-size=1Ki'), /--log-json-info-buffer-size \(logging.options.json.infoBufferSize\): Forbidden: Feature LoggingAlphaOptions is disabled/);
  t.throws(() => parse('--log-text-info-buffer-size=1m'), /LoggingAlphaOptions is disabled/, 'a thousandth of a byte rounds up to 1');
  t.throws(() => parse('--log-text-info-buffer-size=-1m'), /--log-text-info-buffer-size \(logging.options.text.infoBufferSize\): Forbidden: Feature LoggingAlphaOptions is disabled/, 'a negative amount rounds away from zero, to -1: set');
  t.throws(() => resolveOptions(['--hostname-override=node-a', '--config', configFile('logging:\n  options:\n    json:\n      infoBufferSize: "-1"\n')]), /infoBufferSize\): Forbidden: Feature LoggingAlphaOptions is disabled/, 'from the file too');
  t.ok(parse('--log-text-info-buffer-size=0Ki', '--log-json-split-stream=false'), 'zero and false are not set');
  t.ok(parse('--feature-gates=LoggingAlphaOptions=true', '--log-text-split-stream', '--log-json-info-buffer-size=64Ki'), 'allowed with the gate');
  t.ok(parse('--feature-gates=AllAlpha=true', '--log-text-split-stream'), 'AllAlpha turns the alpha gate on');
  t.throws(() => parse('--feature-gates=AllAlpha=true,LoggingAlphaOptions=false', '--log-text-split-stream'), /LoggingAlphaOptions is disabled/, 'an explicit gate wins over AllAlpha');
  t.throws(() => parse('--feature-gates=LoggingBetaOptions=false', '--logging-format=json'), /--logging-format \(logging.format\): Forbidden: Log format json is disabled, see LoggingBetaOptions feature/);
  t.throws(() => parse('--feature-gates=AllBeta=false', '--logging-format=json'), /Log format json is disabled/);
  t.equal(parse('--logging-format=json').logging.format, 'json', 'LoggingBetaOptions is on by default');
  const file = configFile('logging:\n  verbosity: 3000000000\n  vmodule: [{filePattern: "", verbosity: 1}, {filePattern: "a,b", verbosity: 1}]\n');
  const err = (() => { try { resolveOptions(['--config', file]); } catch (e) { return (e as Error).message; } return ''; })();
  t.match(err, /-v \(logging.verbosity\): Invalid value: 3000000000: Must be <= 2147483647/);
  t.match(err, /--vmodule \(logging.vmodule\[0\]\): Required value: File pattern must not be empty/);
  t.match(err, /--vmodule \(logging.vmodule\[1\]\): Invalid value: "a,b": File pattern must not contain equal sign or comma/);
});

t.test('the IPVS scheduler is not checked at validation: the kernel is asked when the proxier starts (kernel/ipvs-proxier-check.ts)', async (t) => {
  t.equal(parse('--ipvs-scheduler=foo').ipvs.scheduler, 'foo', 'any name passes validation, as upstream since 1.27');
  t.equal(parse('--ipvs-scheduler=foo', '--init-only').ipvs.scheduler, 'foo');
  t.equal(resolveOptions(['--ipvs-scheduler=foo', '--cleanup']).options.ipvs.scheduler, 'foo', '--cleanup returns before the proxier is made');
  t.equal(parse('--ipvs-scheduler=').ipvs.scheduler, 'rr', 'empty is rr, as upstream defaults it');
  const out = join(scratchDir('kpparse-'), 'out.yaml');
  await run(['--write-config-to', out, '--ipvs-scheduler=foo']);
  t.match(parseYaml(readFileSync(out, 'utf8')), { ipvs: { scheduler: 'foo' } }, '--write-config-to writes it and exits 0');
  t.equal(parse('--ipvs-scheduler=mh').ipvs.scheduler, 'mh');
});

t.test("--write-config-to in ipvs mode: only the ipvs section has sync periods, as upstream's conversion writes it", async (t) => {
  const out = join(scratchDir('kpparse-'), 'out.yaml');
  await run(['--write-config-to', out, '--proxy-mode=ipvs', '--ipvs-sync-period=20s', '--masquerade-all']);
  const doc = parseYaml(readFileSync(out, 'utf8')) as Record<string, Record<string, unknown>>;
  t.match(doc.ipvs, { syncPeriod: '20s', minSyncPeriod: '1s' });
  t.match(doc.iptables, { syncPeriod: '0s', minSyncPeriod: '0s', masqueradeAll: true, masqueradeBit: 14 });
  t.match(doc.nftables, { syncPeriod: '0s', minSyncPeriod: '0s', masqueradeAll: false, masqueradeBit: 14 });
  const again = resolveOptions(['--config', out, '--hostname-override=n']);
  t.equal(again.options.ipvs.syncPeriodMs, 20_000, 'reads back the same');
  t.equal(again.options.masqueradeAll, true);
});

t.test('a bare bind address with leading zeros gets its port, as proxyutil.AppendPortIfNeeded reads it sloppily', async (t) => {
  t.equal(appendPortIfNeeded('010.1.2.3', 10256), '010.1.2.3:10256', 'the port added, the text kept for validation to read');
  t.equal(appendPortIfNeeded('fd00::1', 10249), '[fd00::1]:10249');
  t.equal(appendPortIfNeeded('not-an-ip', 10249), 'not-an-ip', 'left for validation');
});

t.test('objects: legacy address forms pass as the API server stored them; what no reading takes is still refused', async (t) => {
  const svc = (spec: Record<string, unknown>, status?: Record<string, unknown>) => ({ metadata: { name: 'web', namespace: 'default' }, spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }], ...spec }, ...(status ? { status } : {}) });
  t.doesNotThrow(() => validateService(svc({ clusterIP: '10.96.0.050', clusterIPs: ['10.96.0.050'] })), 'a ClusterIP with leading zeros');
  t.doesNotThrow(() => validateService(svc({ externalIPs: ['', ' ', '203.0.113.010'] })), 'blank externalIPs, and one with leading zeros');
  t.doesNotThrow(() => validateService(svc({ loadBalancerSourceRanges: [' 010.0.0.0/8 ', ''] })), 'source ranges trimmed, blank ones skipped (MapCIDRsByIPFamily)');
  t.doesNotThrow(() => validateService(svc({}, { loadBalancer: { ingress: [{ ip: '' }, { ip: '198.51.100.007' }] } })), 'load-balancer ingress IPs');
  const slice = (address: string) => ({ metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } }, addressType: 'IPv4', endpoints: [{ addresses: [address] }] });
  t.doesNotThrow(() => validateEndpointSlice(slice('10.244.001.5')), 'an endpoint address with leading zeros');
  t.throws(() => validateService(svc({ externalIPs: ['203.0.113.300'] })), /^spec\.externalIPs\[0\] must be an IP address/, 'an address no reading takes');
  t.throws(() => validateService(svc({ loadBalancerSourceRanges: ['10.0.0.0/33'] })), /^spec\.loadBalancerSourceRanges\[0\] must be a CIDR/);
  t.throws(() => validateEndpointSlice(slice('')), /^endpoints\[0\]\.addresses\[0\] must be an IP address/, 'a blank endpoint address');
  t.same(nodeInfoOf('node-a', { metadata: { name: 'node-a' }, status: { addresses: [{ type: 'InternalIP', address: '192.168.001.010' }] } }, undefined).addresses, ['192.168.1.10'], "the Node's addresses as GetNodeHostIPs reads them");
});

t.test('objects: values kube-proxy reads leniently are not refused, so a value a later API adds takes no Service down', async (t) => {
  const svc = (spec: Record<string, unknown>, status?: Record<string, unknown>) => ({ metadata: { name: 'web', namespace: 'default' }, spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }], ...spec }, ...(status ? { status } : {}) });
  t.doesNotThrow(() => validateService(svc({}, { loadBalancer: { ingress: [{ ip: '192.0.2.7', ipMode: 'Router' }] } })), "an ingress ipMode this release does not know (kube-proxy's IsVIPMode: not a VIP)");
  t.doesNotThrow(() => validateService(svc({ externalTrafficPolicy: 'PreferLocal', internalTrafficPolicy: 'Nearby', sessionAffinity: 'Cookie' })), 'traffic policies and affinity kube-proxy compares with Local and ClientIP only');
  t.doesNotThrow(() => validateService(svc({ ipFamilies: ['IPv4', 'IPv7'] })), 'ipFamilies, which kube-proxy does not read');
  t.throws(() => validateService(svc({ externalTrafficPolicy: 7 })), /^spec\.externalTrafficPolicy must be a string, got 7/, 'a value of the wrong kind is still refused, naming the field');
  const slice = (extra: Record<string, unknown>) => ({ metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } }, addressType: 'IPv4', endpoints: [{ addresses: ['10.244.1.5'] }], ...extra });
  t.doesNotThrow(() => validateEndpointSlice(slice({ ports: [{ name: 'http', port: 0 }] })), 'a slice port 0, which kube-proxy passes over ("Ignoring invalid endpoint port")');
  t.doesNotThrow(() => validateEndpointSlice(slice({ endpoints: [{ addresses: ['10.244.1.5'], hints: { forZones: [{ name: 'a' }], forNodes: [{ name: 'node-a' }] } }] })), 'hints as the API writes them');
  t.throws(() => validateEndpointSlice(slice({ endpoints: [{ addresses: ['10.244.1.5'], hints: { forZones: 'zone-a' } }] })), /^endpoints\[0\]\.hints\.forZones must be a list, got "zone-a"/, 'hints of the wrong shape (a manifest\'s typo) are refused, naming the field');
  t.throws(() => validateEndpointSlice(slice({ endpoints: [{ addresses: ['10.244.1.5'], hints: { forNodes: [null] } }] })), /^endpoints\[0\]\.hints\.forNodes\[0\] must be an object/);
  t.throws(() => validateEndpointSlice(slice({ endpoints: [{ addresses: ['10.244.1.5'], hints: { forNodes: [{}] } }] })), /^endpoints\[0\]\.hints\.forNodes\[0\]\.name must be a non-empty string/);
  const node = { metadata: { name: 'node-a' }, status: { addresses: [{ type: 'InternalIP', address: '' }, { type: '', address: '192.168.1.9' }, { type: 'InternalIP', address: '192.168.1.10' }] } };
  t.doesNotThrow(() => validateNode(node), 'Node address entries without a type or an address, which the API server takes');
  t.same(nodeInfoOf('node-a', node, undefined).addresses, ['192.168.1.10'], 'and GetNodeHostIPs passes over');
  const noAddressField = { metadata: { name: 'node-a' }, status: { addresses: [{ type: 'InternalIP' }, { type: 'InternalIP', address: '192.168.1.10' }] } };
  t.doesNotThrow(() => validateNode(noAddressField), 'an entry without its address field (a manifest\'s)');
  t.same(nodeInfoOf('node-a', noAddressField as never, undefined).addresses, ['192.168.1.10'], 'passed over too');
  t.same(parseCidrSloppy('::ffff:10.0.0.0/104', 'c'), parseCidr('10.0.0.0/8', 'c'), "an IPv4-mapped network of prefix 96 or more is the IPv4 one, as Go's IPNet prints it");
  t.equal(parseCidrSloppy('::ffff:0:0/64', 'c').family, 'inet6', 'a shorter one stays IPv6');
});
