/**
 * Everything the proxy is configured with, after flags and the
 * KubeProxyConfiguration file are merged, and the checks kube-proxy makes
 * on it (pkg/proxy/apis/config/validation). Invalid values are refused at
 * start with a message naming the flag (or config field) and what is
 * accepted, never discovered halfway through a sync.
 */
import { hostname } from 'node:os';
import { canonicalAddress, parseCidr } from 'ipvs-netlink/address';
import { canonicalAddressSloppy, cidrFamilySloppy, parseCidrSloppy } from '../kubernetes/sloppy-address.js';
import { defaultProxyConfig, type DetectLocalMode, type Node, type NodeInfo, type ProxyConfig, type RulesBackend } from '../kubernetes/model.js';
import { nodeInfoOf } from '../kubernetes/node.js';
import { NODE_PORT_KEYWORDS } from '../desired/node-addresses.js';
import type { ConntrackSettings } from '../kernel/conntrack-sysctls.js';
import { hasRandomFully } from '../kernel/iptables-flavour.js';
import { KUBERNETES_VERSION } from './build-info.js';
import type { KubeProxyConfiguration } from './config-schema.js';
import { loggingProblems } from './logging-validation.js';

export interface IpvsOptions {
  scheduler: string;
  syncPeriodMs: number;
  minSyncPeriodMs: number;
  excludeCIDRs: string[];
  strictARP: boolean;
  /** 0 = leave the kernel's value (ipvsadm --set semantics). */
  tcpTimeoutMs: number;
  tcpFinTimeoutMs: number;
  udpTimeoutMs: number;
  /** Extension (--ipvs-rules-backend, ipvs.rulesBackend): iptables + ipset, or nftables. */
  rulesBackend: RulesBackend;
}

/** conntrack.* (KubeProxyConntrackConfiguration), as kernel/conntrack-sysctls.ts applies it. */
export type ConntrackOptions = ConntrackSettings;

export type { DetectLocalMode } from '../kubernetes/model.js';

/** How the API server is reached (clientConnection). */
export interface ClientConnectionOptions {
  /** "" = in-cluster service account. */
  kubeconfig: string;
  acceptContentTypes: string;
  contentType: string;
  qps: number;
  burst: number;
}

export interface LoggingOptions {
  /** "text" (klog's line format) or "json" (the Kubernetes JSON log shape). */
  format: 'text' | 'json';
  verbosity: number;
  flushFrequencyMs: number;
  /** --vmodule pattern=N entries. */
  vmodule: Array<{ filePattern: string; verbosity: number }>;
}

export interface ProxyOptions {
  proxyMode: 'ipvs';
  hostnameOverride: string;
  /** Also the node's primary IP when it is not 0.0.0.0 / ::, as kube-proxy treats it. */
  bindAddress: string;
  clusterCIDRs: string[];
  nodePortAddresses: string[];
  masqueradeAll: boolean;
  masqueradeBit: number;
  ipvs: IpvsOptions;
  /** "host:port"; "" disables the server. */
  healthzBindAddress: string;
  metricsBindAddress: string;
  cleanup: boolean;
  verbosity: number;
  kubeconfig?: string;
  master?: string;
  /** Our addition: read objects from a file/folder of YAML instead of an API server. */
  manifests?: string;
  /** Our addition: program the network namespace at this path (tests). */
  netns?: string;
  /** The file --config named, for logs. */
  configFile?: string;
  /** Written to /proc/self/oom_score_adj at start; null leaves it. */
  oomScoreAdj: number | null;
  conntrack: ConntrackOptions;
  detectLocalMode: DetectLocalMode;
  detectLocal: { bridgeInterface: string; interfaceNamePrefix: string };
  /** A health or metrics server that cannot bind makes the proxy exit rather than retry. */
  bindAddressHardFail: boolean;
  clientConnection: ClientConnectionOptions;
  /** Informer resync period. */
  configSyncPeriodMs: number;
  featureGates: Record<string, boolean>;
  logging: LoggingOptions;
  /** The effective KubeProxyConfiguration these options came from (for /configz); absent when built in code. */
  kubeProxyConfiguration?: KubeProxyConfiguration;
}


export function defaultOptions(): ProxyOptions {
  return {
    proxyMode: 'ipvs',
    // kube-proxy uses the lower-cased hostname when no override is given.
    hostnameOverride: hostname().toLowerCase(),
    bindAddress: '0.0.0.0',
    clusterCIDRs: [],
    nodePortAddresses: [],
    masqueradeAll: false,
    masqueradeBit: 14,
    ipvs: {
      scheduler: 'rr',
      syncPeriodMs: 30_000,
      // kube-proxy leaves the IPVS minSyncPeriod at 0: every change syncs at once.
      minSyncPeriodMs: 0,
      excludeCIDRs: [],
      strictARP: false,
      tcpTimeoutMs: 0,
      tcpFinTimeoutMs: 0,
      udpTimeoutMs: 0,
      rulesBackend: 'iptables',
    },
    healthzBindAddress: '0.0.0.0:10256',
    metricsBindAddress: '127.0.0.1:10249',
    cleanup: false,
    verbosity: 0,
    oomScoreAdj: -999,
    conntrack: {
      maxPerCore: 32768,
      min: 131072,
      tcpEstablishedTimeoutMs: 24 * 3_600_000,
      tcpCloseWaitTimeoutMs: 3_600_000,
      tcpBeLiberal: false,
      udpTimeoutMs: 0,
      udpStreamTimeoutMs: 0,
    },
    detectLocalMode: 'ClusterCIDR',
    detectLocal: { bridgeInterface: '', interfaceNamePrefix: '' },
    bindAddressHardFail: false,
    clientConnection: { kubeconfig: '', acceptContentTypes: '', contentType: 'application/vnd.kubernetes.protobuf', qps: 5, burst: 10 },
    configSyncPeriodMs: 15 * 60_000,
    featureGates: {},
    logging: { format: 'text', verbosity: 0, flushFrequencyMs: 5000, vmodule: [] },
  };
}

export class OptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OptionsError';
  }
}

/** Checks the merged options; throws an OptionsError listing every problem at once. */
export function validateOptions(o: ProxyOptions): ProxyOptions {
  const problems: string[] = [];
  const check = (ok: boolean, message: string) => {
    if (!ok) problems.push(message);
  };
  check(o.proxyMode === 'ipvs', `--proxy-mode (mode): only "ipvs" is supported by kube-proxy-ipvs, got "${o.proxyMode}"`);
  // Addresses and CIDRs are read as upstream's ParseIPSloppy/ParseCIDRSloppy read them: "010.1.2.3" is 10.1.2.3.
  check(canonicalAddressSloppy(o.bindAddress) !== undefined, `--bind-address (bindAddress): "${o.bindAddress}" is not an IP address`);
  // Upstream checks clusterCIDR only where it is used: for the ClusterCIDR detector.
  if (o.detectLocalMode === 'ClusterCIDR' && o.clusterCIDRs.length > 0) problems.push(...dualStackCIDRProblems(o.clusterCIDRs, '--cluster-cidr (clusterCIDR)'));
  o.nodePortAddresses.forEach((c, i) => {
    if (!Object.hasOwn(NODE_PORT_KEYWORDS, c) && cidrFamilySloppy(c) === undefined) {
      problems.push(`--nodeport-addresses (nodePortAddresses[${i}]): Invalid value: ${JSON.stringify(c)}: must be a CIDR or one of the keywords ${Object.keys(NODE_PORT_KEYWORDS).map((k) => `"${k}"`).join(', ')}`);
    }
  });
  problems.push(...hiddenMetricsVersionProblems(o.kubeProxyConfiguration?.showHiddenMetricsForVersion ?? ''));
  check(Number.isInteger(o.masqueradeBit) && o.masqueradeBit >= 0 && o.masqueradeBit <= 31, `masqueradeBit must be an integer from 0 to 31, got ${o.masqueradeBit}`);
  const v = o.ipvs;
  // ipvs.scheduler is not checked here: upstream finds an unknown one only when the IPVS proxier starts, by asking the kernel (kernel/ipvs-proxier-check.ts).
  check(v.syncPeriodMs > 0, `--ipvs-sync-period (ipvs.syncPeriod) must be greater than 0`);
  check(v.minSyncPeriodMs >= 0, `--ipvs-min-sync-period (ipvs.minSyncPeriod) must be 0 or more`);
  check(v.minSyncPeriodMs <= v.syncPeriodMs, `--ipvs-sync-period (ipvs.syncPeriod) must be greater than or equal to --ipvs-min-sync-period (ipvs.minSyncPeriod)`);
  v.excludeCIDRs.forEach((c) => cidr(c, '--ipvs-exclude-cidrs (ipvs.excludeCIDRs)', problems));
  check(v.rulesBackend === 'iptables' || v.rulesBackend === 'nftables', `--ipvs-rules-backend (ipvs.rulesBackend): Unsupported value: "${v.rulesBackend}": supported values: "iptables", "nftables"`);
  for (const [name, ms] of [
    ['--ipvs-tcp-timeout (ipvs.tcpTimeout)', v.tcpTimeoutMs],
    ['--ipvs-tcpfin-timeout (ipvs.tcpFinTimeout)', v.tcpFinTimeoutMs],
    ['--ipvs-udp-timeout (ipvs.udpTimeout)', v.udpTimeoutMs],
    ['--conntrack-udp-timeout (conntrack.udpTimeout)', o.conntrack.udpTimeoutMs],
    ['--conntrack-udp-timeout-stream (conntrack.udpStreamTimeout)', o.conntrack.udpStreamTimeoutMs],
    ['--conntrack-tcp-timeout-established (conntrack.tcpEstablishedTimeout)', o.conntrack.tcpEstablishedTimeoutMs ?? 0],
    ['--conntrack-tcp-timeout-close-wait (conntrack.tcpCloseWaitTimeout)', o.conntrack.tcpCloseWaitTimeoutMs ?? 0],
    ['--conntrack-max-per-core (conntrack.maxPerCore)', o.conntrack.maxPerCore ?? 0],
    ['--conntrack-min (conntrack.min)', o.conntrack.min ?? 0],
    ['--kube-api-burst (clientConnection.burst)', o.clientConnection.burst],
  ] as const) {
    check(ms >= 0, `${name} must be greater than or equal to 0`);
  }
  check(o.oomScoreAdj === null || (o.oomScoreAdj >= -1000 && o.oomScoreAdj <= 1000), `--oom-score-adj (oomScoreAdj) must be within the range [-1000, 1000], got ${o.oomScoreAdj}`);
  check(o.configSyncPeriodMs > 0, `--config-sync-period (configSyncPeriod) must be greater than 0`);
  const modes = ['ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix'];
  check(modes.includes(o.detectLocalMode), `--detect-local-mode (detectLocalMode): Unsupported value: "${o.detectLocalMode}": supported values: ${modes.map((m) => `"${m}"`).join(', ')}`);
  check(o.detectLocalMode !== 'BridgeInterface' || o.detectLocal.bridgeInterface !== '', `--pod-bridge-interface (detectLocal.bridgeInterface) must not be empty when --detect-local-mode is BridgeInterface`);
  check(o.detectLocalMode !== 'InterfaceNamePrefix' || o.detectLocal.interfaceNamePrefix !== '', `--pod-interface-name-prefix (detectLocal.interfaceNamePrefix) must not be empty when --detect-local-mode is InterfaceNamePrefix`);
  check(o.logging.format === 'text' || o.logging.format === 'json', `--logging-format (logging.format): Unsupported value: "${o.logging.format}": supported values: "json", "text"`);
  if (o.kubeProxyConfiguration) problems.push(...loggingProblems(o.kubeProxyConfiguration));
  // An empty healthz address turns the server off; upstream checks the metrics address even when empty.
  if (o.healthzBindAddress !== '') problems.push(...hostPortProblems(o.healthzBindAddress, '--healthz-bind-address (healthzBindAddress)'));
  problems.push(...hostPortProblems(o.metricsBindAddress, '--metrics-bind-address (metricsBindAddress)'));
  check(Number.isInteger(o.verbosity) && o.verbosity >= 0, `-v must be a non-negative integer, got ${o.verbosity}`);
  if (problems.length) throw new OptionsError(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  return withParsedAddresses(o);
}

/**
 * The options with every address and CIDR that needed the sloppy reading
 * replaced by what upstream's parsed value is ("010.0.0.0/8" → 10.0.0.0/8),
 * so that what is programmed is what kube-proxy programs. Values that read
 * strictly, or not at all, are kept as written.
 */
function withParsedAddresses(o: ProxyOptions): ProxyOptions {
  const cidrText = (c: string) => {
    try {
      parseCidr(c, 'CIDR');
      return c;
    } catch {
      // Validation checks clusterCIDRs only in ClusterCIDR mode, as upstream does:
      // text that is no CIDR at all stays as written for whatever reads it later.
      try {
        return parseCidrSloppy(c, 'CIDR').text;
      } catch {
        return c;
      }
    }
  };
  return {
    ...o,
    bindAddress: canonicalAddress(o.bindAddress) !== undefined ? o.bindAddress : (canonicalAddressSloppy(o.bindAddress) ?? o.bindAddress),
    clusterCIDRs: o.clusterCIDRs.map(cidrText),
    nodePortAddresses: o.nodePortAddresses.map((c) => (Object.hasOwn(NODE_PORT_KEYWORDS, c) ? c : cidrText(c))),
    ipvs: { ...o.ipvs, excludeCIDRs: o.ipvs.excludeCIDRs.map(cidrText) },
  };
}

function cidr(value: string, name: string, problems: string[]): void {
  if (cidrFamilySloppy(value) === undefined) problems.push(`${name}: "${value}" is not a CIDR such as 10.0.0.0/8`);
}

const DUAL_STACK_PAIR = 'must be a either a single CIDR or dual-stack pair of CIDRs (e.g. [10.100.0.0/16, fde4:8dba:82e1::/48]';

/** validateDualStackCIDRStrings: one CIDR, or two of different families; each checked as written. */
function dualStackCIDRProblems(cidrs: readonly string[], name: string): string[] {
  if (cidrs.length > 2) return [`${name}: Invalid value: ${JSON.stringify(cidrs.join(','))}: ${DUAL_STACK_PAIR}`];
  const bad = cidrs.filter((c) => cidrFamilySloppy(c) === undefined);
  if (bad.length) return bad.map((c) => `${name}: Invalid value: ${JSON.stringify(c)}: must be a valid CIDR block (e.g. 10.100.0.0/16 or fde4:8dba:82e1::/48)`);
  const families = new Set(cidrs.map((c) => cidrFamilySloppy(c)));
  return cidrs.length === 2 && families.size === 1 ? [`${name}: Invalid value: ${JSON.stringify(cidrs.join(','))}: ${DUAL_STACK_PAIR}`] : [];
}

/**
 * validateHostPort: Go's net.SplitHostPort, then an IP host (not empty) and
 * a port from 1 to 65535. Stricter than parseHostPort, which also takes
 * port 0 and an empty host for servers started in code.
 */
function hostPortProblems(value: string, name: string): string[] {
  const split = splitHostPort(value);
  if (!split) return [`${name}: Invalid value: ${JSON.stringify(value)}: must be IP:port`];
  const out: string[] = [];
  if (canonicalAddressSloppy(split.host) === undefined) out.push(`${name}: Invalid value: ${JSON.stringify(split.host)}: must be a valid IP`);
  const port = /^[+-]?\d+$/.test(split.port) ? Number(split.port) : NaN;
  if (!(port >= 1 && port <= 65535)) out.push(`${name}: Invalid value: ${JSON.stringify(split.port)}: must be a valid port`);
  return out;
}

/** Go's net.SplitHostPort: "host:port" or "[host]:port"; undefined where Go returns an error. */
function splitHostPort(value: string): { host: string; port: string } | undefined {
  const colon = value.lastIndexOf(':');
  if (colon < 0) return undefined;
  let host: string;
  let from = 0;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0 || end + 1 !== colon) return undefined;
    host = value.slice(1, end);
    from = end + 1;
    if (value.indexOf('[', 1) >= 0) return undefined;
  } else {
    host = value.slice(0, colon);
    if (host.includes(':') || value.includes('[')) return undefined;
  }
  if (value.indexOf(']', from) >= 0) return undefined;
  return { host, port: value.slice(colon + 1) };
}

/**
 * component-base's check, which kube-proxy's validation applies: only the
 * release before the one this proxy mirrors may be named (its hidden
 * metrics are the ones deprecated one release ago).
 */
function hiddenMetricsVersionProblems(value: string): string[] {
  if (value === '') return [];
  const [, major, minor] = /^v(\d+)\.(\d+)/.exec(KUBERNETES_VERSION)!;
  const previous = `${major}.${Number(minor) - 1}`;
  if (value === previous) return [];
  return [`--show-hidden-metrics-for-version (showHiddenMetricsForVersion): Invalid value: ${JSON.stringify(value)}: must be omitted or have the value '${previous}'. Only the previous minor version is allowed`];
}

/** "0.0.0.0:10256", "[::]:10256", "127.0.0.1:10249" → host and port; a host with leading zeros ("010.1.2.3") comes back as the address it reads as. */
export function parseHostPort(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d+)$/.exec(value.trim());
  if (!m) throw new RangeError(`"${value}" must be host:port, such as 0.0.0.0:10256 or [::]:10256`);
  const host = m[1] ?? m[2];
  const port = Number(m[3]);
  if (host === '') return checkedPort('0.0.0.0', port, value);
  // A host that reads strictly is kept as written; only one that needs the sloppy reading is rewritten.
  const ip = canonicalAddress(host) !== undefined ? host : canonicalAddressSloppy(host);
  if (ip === undefined) throw new RangeError(`"${host}" in "${value}" is not an IP address`);
  return checkedPort(ip, port, value);
}

function checkedPort(host: string, port: number, value: string): { host: string; port: number } {
  if (port > 65535) throw new RangeError(`port ${port} in "${value}" is out of range`);
  return { host, port };
}

/**
 * The planner's view of the options. `iptables`: what a running proxy found
 * on the host (its version decides --random-fully in the iptables backend;
 * the nftables backend always masquerades fully-random, as kube-proxy's
 * nftables mode does); without it (plan, the one-shot jobs) the default.
 */
export function proxyConfigOf(o: ProxyOptions, iptables?: { version?: string }): ProxyConfig {
  return defaultProxyConfig({
    ...(iptables ? { randomFully: o.ipvs.rulesBackend === 'nftables' || hasRandomFully(iptables.version) } : {}),
    scheduler: o.ipvs.scheduler,
    masqueradeAll: o.masqueradeAll,
    masqueradeBit: o.masqueradeBit,
    clusterCIDRs: o.clusterCIDRs,
    detectLocalMode: o.detectLocalMode,
    detectLocal: { ...o.detectLocal },
    nodePortAddresses: o.nodePortAddresses,
    excludeCIDRs: o.ipvs.excludeCIDRs,
    strictARP: o.ipvs.strictARP,
    rulesBackend: o.ipvs.rulesBackend,
  });
}

/** A node IP given by --bind-address (kube-proxy: "overrides kube-proxy's idea of what its node's primary IP is"). */
function bindAddressNodeIP(o: ProxyOptions): string | undefined {
  // Unspecified in any spelling ("000.000.000.000", "0::0") is no node IP, as upstream's IsUnspecified().
  const ip = canonicalAddressSloppy(o.bindAddress);
  return ip === '0.0.0.0' || ip === '::' ? undefined : ip;
}

/**
 * This node as the proxy and `plan` both see it: --hostname-override's
 * Node object (its InternalIPs, then ExternalIPs, and its labels), with
 * --bind-address as the primary address when it names one.
 */
export function nodeInfoFor(o: ProxyOptions, node: Node | undefined): NodeInfo {
  return nodeInfoOf(o.hostnameOverride, node, bindAddressNodeIP(o));
}

/** nodeInfoFor(), for a start: a node without any address cannot be served, and the error says where addresses come from. */
export function startingNodeInfo(o: ProxyOptions, node: Node | undefined): NodeInfo {
  const info = nodeInfoFor(o, node);
  if (info.addresses.length === 0) {
    throw new Error(
      `no address for node "${o.hostnameOverride}": no Node object of that name with an InternalIP/ExternalIP (check --hostname-override), and no --bind-address`,
    );
  }
  return info;
}
