/**
 * `--config FILE`: kube-proxy's KubeProxyConfiguration
 * (kubeproxy.config.k8s.io/v1alpha1) → the options it sets. Decoding is
 * strict, as kube-proxy's is: a field that KubeProxyConfiguration does not
 * have is an error (a typo must not silently fall back to a default).
 * Fields it has but this proxy does not use (conntrack, nftables...) are
 * returned as `ignored` so the caller can log them.
 */
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { parseDuration } from './duration.js';
import { OptionsError, type ProxyOptions } from './options.js';

export type OptionsPatch = Partial<Omit<ProxyOptions, 'ipvs'>> & { ipvs?: Partial<ProxyOptions['ipvs']> };

const API_VERSIONS = ['kubeproxy.config.k8s.io/v1alpha1', 'kubeproxy.config.k8s.io/v1alpha2'];

/** KubeProxyConfiguration fields that exist but mean nothing in IPVS mode here. */
const IGNORED = new Set([
  'featureGates', 'bindAddressHardFail', 'enableProfiling', 'showHiddenMetricsForVersion', 'nftables', 'winkernel',
  'detectLocalMode', 'detectLocal', 'oomScoreAdj', 'conntrack', 'configSyncPeriod', 'portRange', 'logging',
  'windowsRunAsService', 'udpIdleTimeout',
]);
const KNOWN = new Set([
  'apiVersion', 'kind', 'clientConnection', 'hostnameOverride', 'bindAddress', 'healthzBindAddress', 'metricsBindAddress',
  'mode', 'iptables', 'ipvs', 'clusterCIDR', 'nodePortAddresses', 'syncPeriod', 'minSyncPeriod', ...IGNORED,
]);
const IPVS_FIELDS = new Set(['syncPeriod', 'minSyncPeriod', 'scheduler', 'excludeCIDRs', 'strictARP', 'tcpTimeout', 'tcpFinTimeout', 'udpTimeout']);
const IPTABLES_FIELDS = new Set(['masqueradeBit', 'masqueradeAll', 'localhostNodePorts', 'syncPeriod', 'minSyncPeriod']);
const CLIENT_FIELDS = new Set(['kubeconfig', 'acceptContentTypes', 'contentType', 'qps', 'burst']);

export interface ConfigFile {
  patch: OptionsPatch;
  /** Fields present in the file that this proxy does not act on. */
  ignored: string[];
}

export function loadConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new OptionsError(`--config ${path}: cannot read it: ${(e as Error).message}`);
  }
  return parseConfig(text, path);
}

export function parseConfig(text: string, path = '<config>'): ConfigFile {
  const doc = parseDocument(text);
  if (doc.errors.length) throw new OptionsError(`--config ${path}: not valid YAML: ${doc.errors[0].message}`);
  const raw: unknown = doc.toJS();
  const r = new Reader(path);
  const o = r.object(raw, '');
  if (o.kind !== 'KubeProxyConfiguration') r.fail('kind', `must be KubeProxyConfiguration, got ${JSON.stringify(o.kind)}`);
  if (!API_VERSIONS.includes(o.apiVersion as string)) r.fail('apiVersion', `must be one of ${API_VERSIONS.join(', ')}, got ${JSON.stringify(o.apiVersion)}`);
  r.onlyKnown(o, KNOWN, '');

  const patch: OptionsPatch = {};
  const ignored = Object.keys(o).filter((k) => IGNORED.has(k));
  if (o.mode !== undefined && o.mode !== '') patch.proxyMode = r.string(o.mode, 'mode') as 'ipvs';
  if (o.hostnameOverride) patch.hostnameOverride = r.string(o.hostnameOverride, 'hostnameOverride').toLowerCase();
  if (o.bindAddress) patch.bindAddress = r.string(o.bindAddress, 'bindAddress');
  if (o.healthzBindAddress !== undefined) patch.healthzBindAddress = r.string(o.healthzBindAddress, 'healthzBindAddress');
  if (o.metricsBindAddress !== undefined) patch.metricsBindAddress = r.string(o.metricsBindAddress, 'metricsBindAddress');
  if (o.clusterCIDR) patch.clusterCIDRs = splitList(r.string(o.clusterCIDR, 'clusterCIDR'));
  if (o.nodePortAddresses !== undefined && o.nodePortAddresses !== null) patch.nodePortAddresses = r.strings(o.nodePortAddresses, 'nodePortAddresses');

  if (o.clientConnection !== undefined && o.clientConnection !== null) {
    const c = r.object(o.clientConnection, 'clientConnection');
    r.onlyKnown(c, CLIENT_FIELDS, 'clientConnection.');
    if (c.kubeconfig) patch.kubeconfig = r.string(c.kubeconfig, 'clientConnection.kubeconfig');
  }
  const ipvs: OptionsPatch['ipvs'] = {};
  // Newer configs hoist the sync periods to the top level; ipvs.* wins when both are set.
  if (o.syncPeriod) ipvs.syncPeriodMs = r.duration(o.syncPeriod, 'syncPeriod');
  if (o.minSyncPeriod) ipvs.minSyncPeriodMs = r.duration(o.minSyncPeriod, 'minSyncPeriod');
  if (o.iptables !== undefined && o.iptables !== null) {
    const t = r.object(o.iptables, 'iptables');
    r.onlyKnown(t, IPTABLES_FIELDS, 'iptables.');
    if (t.masqueradeAll !== undefined) patch.masqueradeAll = r.boolean(t.masqueradeAll, 'iptables.masqueradeAll');
    if (t.masqueradeBit !== undefined && t.masqueradeBit !== null) patch.masqueradeBit = r.integer(t.masqueradeBit, 'iptables.masqueradeBit');
    for (const k of ['localhostNodePorts', 'syncPeriod', 'minSyncPeriod']) if (t[k] !== undefined) ignored.push(`iptables.${k}`);
  }
  if (o.ipvs !== undefined && o.ipvs !== null) {
    const v = r.object(o.ipvs, 'ipvs');
    r.onlyKnown(v, IPVS_FIELDS, 'ipvs.');
    if (v.syncPeriod) ipvs.syncPeriodMs = r.duration(v.syncPeriod, 'ipvs.syncPeriod');
    if (v.minSyncPeriod) ipvs.minSyncPeriodMs = r.duration(v.minSyncPeriod, 'ipvs.minSyncPeriod');
    if (v.scheduler) ipvs.scheduler = r.string(v.scheduler, 'ipvs.scheduler');
    if (v.excludeCIDRs !== undefined && v.excludeCIDRs !== null) ipvs.excludeCIDRs = r.strings(v.excludeCIDRs, 'ipvs.excludeCIDRs');
    if (v.strictARP !== undefined) ipvs.strictARP = r.boolean(v.strictARP, 'ipvs.strictARP');
    if (v.tcpTimeout) ipvs.tcpTimeoutMs = r.duration(v.tcpTimeout, 'ipvs.tcpTimeout');
    if (v.tcpFinTimeout) ipvs.tcpFinTimeoutMs = r.duration(v.tcpFinTimeout, 'ipvs.tcpFinTimeout');
    if (v.udpTimeout) ipvs.udpTimeoutMs = r.duration(v.udpTimeout, 'ipvs.udpTimeout');
  }
  if (Object.keys(ipvs).length) patch.ipvs = ipvs;
  return { patch, ignored };
}

export function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Typed reads that fail naming the file and the field. */
class Reader {
  constructor(private readonly path: string) {}

  fail(field: string, message: string): never {
    throw new OptionsError(`--config ${this.path}: ${field || 'the document'} ${message}`);
  }

  object(v: unknown, field: string): Record<string, unknown> {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(field, 'must be a mapping');
    return v as Record<string, unknown>;
  }

  onlyKnown(o: Record<string, unknown>, known: Set<string>, prefix: string): void {
    const unknown = Object.keys(o).filter((k) => !known.has(k));
    if (unknown.length) {
      this.fail(`${prefix}${unknown[0]}`, `is not a KubeProxyConfiguration field (strict decoding; known here: ${[...known].filter((k) => !IGNORED.has(k)).join(', ')})`);
    }
  }

  string(v: unknown, field: string): string {
    if (typeof v !== 'string') this.fail(field, `must be a string, got ${JSON.stringify(v)}`);
    return v;
  }

  strings(v: unknown, field: string): string[] {
    if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) this.fail(field, `must be a list of strings, got ${JSON.stringify(v)}`);
    return v as string[];
  }

  boolean(v: unknown, field: string): boolean {
    if (typeof v !== 'boolean') this.fail(field, `must be true or false, got ${JSON.stringify(v)}`);
    return v;
  }

  integer(v: unknown, field: string): number {
    if (typeof v !== 'number' || !Number.isInteger(v)) this.fail(field, `must be an integer, got ${JSON.stringify(v)}`);
    return v;
  }

  duration(v: unknown, field: string): number {
    try {
      return parseDuration(this.string(v, field));
    } catch (e) {
      if (e instanceof OptionsError) throw e;
      this.fail(field, (e as Error).message.replace(/^invalid duration/, 'is an invalid duration'));
    }
  }
}
