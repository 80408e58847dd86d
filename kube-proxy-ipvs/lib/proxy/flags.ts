/**
 * kube-proxy's command-line flags, every one a current release registers
 * on Linux (cmd/kube-proxy/app options.go, component-base's logging and
 * version flags, the two cadvisor flags), with upstream's value types and
 * defaults, plus this project's own (marked as extensions). Each flag
 * either writes into the KubeProxyConfiguration being built (as upstream's
 * flags write into its config struct) or sets a control value.
 *
 * Flags without an effect in IPVS mode are accepted and named once in a
 * warning. Help text comes from this table.
 */
import { appendPortIfNeeded } from './config-defaults.js';
import type { KubeProxyConfiguration } from './config-schema.js';
import { parseDuration } from './duration.js';
import { parseCsv, parseGoBool, parseGoFloat, parseGoInt } from './flag-parser.js';
import { canonicalAddressSloppy } from '../kubernetes/sloppy-address.js';

/** Values that are not part of KubeProxyConfiguration. */
export interface Control {
  config?: string;
  writeConfigTo?: string;
  cleanup: boolean;
  initOnly: boolean;
  master?: string;
  /** Raw --hostname-override (trimmed and lower-cased later, as upstream). */
  hostnameOverride?: string;
  healthzPort: number;
  metricsPort: number;
  version?: string;
  help: boolean;
  manifests?: string;
  netns?: string;
}

export function defaultControl(): Control {
  return { cleanup: false, initOnly: false, healthzPort: 10256, metricsPort: 10249, help: false };
}

type Setter = (c: KubeProxyConfiguration, value: string | undefined, ctl: Control) => void;

export type FlagGroup =
  /** Writes into the configuration; with --config, the file wins and the flag is ignored. */
  | 'config'
  /** A logging flag: applies over the file too (copyLogsFromFlags). */
  | 'logging'
  /** Applies with or without --config. */
  | 'control'
  /** This project's own flag (an extension). */
  | 'extension';

export interface FlagDef {
  name: string;
  shorthand?: string;
  /** The value type shown in help, as pflag names it. */
  type: string;
  /** Default as --help shows it. */
  def: string;
  help: string;
  group: FlagGroup;
  /** No effect in IPVS mode: accepted, warned about once. */
  inert?: boolean;
  deprecated?: string;
  noValue?: boolean;
  set: Setter;
}

const toBool = (v: string | undefined) => (v === undefined ? true : parseGoBool(v));
const toDuration = (v: string | undefined) => {
  try {
    return parseDuration(v ?? '');
  } catch {
    throw new RangeError(`time: invalid duration ${JSON.stringify(v)}`);
  }
};
const toInt = (v: string | undefined) => parseGoInt(v ?? '');

/** component-base's IPVar: an IP address (ParseIPSloppy: "010.1.2.3" too); "" leaves the value alone. */
function ipFlag(set: (c: KubeProxyConfiguration, v: string) => void): Setter {
  return (c, v) => {
    if (v === undefined || v === '') return;
    if (canonicalAddressSloppy(v) === undefined) throw new RangeError(`"${v}" is not a valid IP address`);
    set(c, v);
  };
}

/** IPPortVar: an IP, or IP:port, the IP read by ParseIPSloppy; "" leaves the value alone. */
function ipPortFlag(set: (c: KubeProxyConfiguration, v: string) => void): Setter {
  return (c, v) => {
    if (v === undefined || v === '') return;
    const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d+)$/.exec(v);
    const ip = m ? (m[1] ?? m[2]) : v;
    if (canonicalAddressSloppy(ip) === undefined) throw new RangeError(`"${v}" is not a valid IP address or IP:port`);
    set(c, v);
  };
}

/** pflag's stringSlice: the first use replaces the default, later uses append. */
function sliceFlag(get: (c: KubeProxyConfiguration) => string[] | null, put: (c: KubeProxyConfiguration, v: string[]) => void): Setter {
  const touched = new WeakSet<KubeProxyConfiguration>();
  return (c, v) => {
    const items = parseCsv(v ?? '');
    put(c, touched.has(c) ? [...(get(c) ?? []), ...items] : items);
    touched.add(c);
  };
}

/** cliflag.MapStringBool: k=v,k2=v2; repeated uses merge. */
function parseBoolMap(text: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const kv = pair.split('=');
    if (kv.length !== 2) throw new RangeError(`malformed pair, expect string=bool`);
    const [k, v] = [kv[0].trim(), kv[1].trim()];
    try {
      out[k] = parseGoBool(v);
    } catch (e) {
      throw new RangeError(`invalid value of ${k}: ${v}, err: ${(e as Error).message}`);
    }
  }
  return out;
}

/** --vmodule pattern=N,... */
function parseVmodule(text: string): Array<{ filePattern: string; verbosity: number }> {
  return text
    .split(',')
    .filter((s) => s !== '')
    .map((item) => {
      const m = /^([^=]+)=(\d+)$/.exec(item);
      if (!m) throw new RangeError(`"${item}" does not have the pattern=N format`);
      return { filePattern: m[1], verbosity: Number(m[2]) };
    });
}

function verbosity(v: string | undefined): number {
  const n = toInt(v);
  if (n < 0) throw new RangeError(`strconv.ParseUint: parsing ${JSON.stringify(v)}: invalid syntax`);
  return n;
}

function flag(name: string, type: string, def: string, group: FlagGroup, help: string, set: Setter, extra: Partial<FlagDef> = {}): FlagDef {
  return { name, type, def, group, help, set, noValue: type === 'bool' || undefined, ...extra };
}

const IGNORED_WITH_CONFIG = 'This parameter is ignored if a config file is specified by --config.';

export const FLAGS: readonly FlagDef[] = [
  flag('config', 'string', '', 'control', 'The path to the configuration file.', (_c, v, x) => void (x.config = v)),
  flag('write-config-to', 'string', '', 'control', 'If set, write the default configuration values to this file and exit.', (_c, v, x) => void (x.writeConfigTo = v)),
  flag('cleanup', 'bool', 'false', 'control', 'If true cleanup iptables and ipvs rules and exit.', (_c, v, x) => void (x.cleanup = toBool(v))),
  flag('init-only', 'bool', 'false', 'control', 'If true, perform any initialization steps that must be done with full root privileges, and then exit. After doing this, you can run kube-proxy again with only the CAP_NET_ADMIN capability.', (_c, v, x) => void (x.initOnly = toBool(v))),
  flag('feature-gates', 'mapStringBool', '', 'config', 'A set of key=value pairs that describe feature gates for alpha/experimental features. ' + IGNORED_WITH_CONFIG, (c, v) => {
    c.featureGates = { ...(c.featureGates ?? {}), ...parseBoolMap(v ?? '') };
  }),
  flag('kubeconfig', 'string', '', 'config', 'Path to kubeconfig file with authorization information (the master location can be overridden by the master flag).', (c, v) => void (c.clientConnection.kubeconfig = v ?? '')),
  flag('master', 'string', '', 'control', 'The address of the Kubernetes API server (overrides any value in kubeconfig)', (_c, v, x) => void (x.master = v)),
  flag('kube-api-content-type', 'string', 'application/vnd.kubernetes.protobuf', 'config', 'Content type of requests sent to apiserver.', (c, v) => void (c.clientConnection.contentType = v ?? '')),
  flag('kube-api-burst', 'int32', '10', 'config', 'Burst to use while talking with kubernetes apiserver', (c, v) => void (c.clientConnection.burst = toInt(v))),
  flag('kube-api-qps', 'float32', '5', 'config', 'QPS to use while talking with kubernetes apiserver', (c, v) => void (c.clientConnection.qps = parseGoFloat(v ?? ''))),
  flag('hostname-override', 'string', '', 'control', 'If non-empty, will be used as the name of the Node that kube-proxy is running on. If unset, the node name is assumed to be the same as the node\'s hostname.', (_c, v, x) => void (x.hostnameOverride = v)),
  flag('bind-address', 'ip', '0.0.0.0', 'config', 'Overrides kube-proxy\'s idea of what its node\'s primary IP is. ' + IGNORED_WITH_CONFIG, ipFlag((c, v) => (c.bindAddress = v))),
  flag('healthz-bind-address', 'ipport', '0.0.0.0:10256', 'config', 'The IP address and port for the health check server to serve on, defaulting to "0.0.0.0:10256". ' + IGNORED_WITH_CONFIG, ipPortFlag((c, v) => (c.healthzBindAddress = v))),
  flag('metrics-bind-address', 'ipport', '127.0.0.1:10249', 'config', 'The IP address and port for the metrics server to serve on, defaulting to "127.0.0.1:10249". ' + IGNORED_WITH_CONFIG, ipPortFlag((c, v) => (c.metricsBindAddress = v))),
  flag('bind-address-hard-fail', 'bool', 'false', 'config', 'If true kube-proxy will treat failure to bind to a port as fatal and exit', (c, v) => void (c.bindAddressHardFail = toBool(v))),
  flag('profiling', 'bool', 'false', 'config', 'If true enables profiling via web interface on /debug/pprof handler. ' + IGNORED_WITH_CONFIG, (c, v) => void (c.enableProfiling = toBool(v)), { inert: true }),
  flag('show-hidden-metrics-for-version', 'string', '', 'config', 'The previous version for which you want to show hidden metrics.', (c, v) => void (c.showHiddenMetricsForVersion = v ?? ''), { inert: true }),
  flag('proxy-mode', 'ProxyMode', '', 'config', 'Which proxy mode to use; kube-proxy-ipvs runs "ipvs" (and takes "" as ipvs). ' + IGNORED_WITH_CONFIG, (c, v) => void (c.mode = v ?? '')),
  flag('iptables-masquerade-bit', 'int32', '14', 'config', 'Which bit of the fwmark space to mark packets requiring SNAT with. Must be within the range [0, 31].', (c, v) => void (c.iptables.masqueradeBit = toInt(v))),
  flag('masquerade-all', 'bool', 'false', 'config', 'SNAT all traffic sent via Service cluster IPs.', (c, v) => void (c.iptables.masqueradeAll = toBool(v))),
  flag('iptables-localhost-nodeports', 'bool', 'true', 'config', 'If false, kube-proxy will disable the legacy behavior of allowing NodePort services to be accessed via localhost. (Applies only to iptables mode and IPv4.)', (c, v) => void (c.iptables.localhostNodePorts = toBool(v)), { inert: true }),
  flag('iptables-sync-period', 'duration', '30s', 'config', 'An interval indicating how frequently various re-synchronizing and cleanup operations are performed (iptables mode).', (c, v) => void (c.iptables.syncPeriod = toDuration(v)), { inert: true }),
  flag('iptables-min-sync-period', 'duration', '1s', 'config', 'The minimum period between iptables rule resyncs (iptables mode).', (c, v) => void (c.iptables.minSyncPeriod = toDuration(v)), { inert: true }),
  flag('ipvs-sync-period', 'duration', '30s', 'config', 'An interval (e.g. \'5s\', \'1m\', \'2h22m\') indicating how frequently various re-synchronizing and cleanup operations are performed. Must be greater than 0.', (c, v) => void (c.ipvs.syncPeriod = toDuration(v))),
  flag('ipvs-min-sync-period', 'duration', '1s', 'config', 'The minimum period between IPVS rule resyncs (e.g. \'5s\', \'1m\', \'2h22m\'). A value of 0 means every Service or EndpointSlice change will result in an immediate IPVS resync.', (c, v) => void (c.ipvs.minSyncPeriod = toDuration(v))),
  flag('ipvs-scheduler', 'string', '', 'config', 'The ipvs scheduler type when proxy mode is ipvs', (c, v) => void (c.ipvs.scheduler = v ?? '')),
  flag('ipvs-exclude-cidrs', 'strings', '[]', 'config', 'A comma-separated list of CIDRs which the ipvs proxier should not touch when cleaning up IPVS rules.', sliceFlag((c) => c.ipvs.excludeCIDRs, (c, v) => (c.ipvs.excludeCIDRs = v))),
  flag('ipvs-strict-arp', 'bool', 'false', 'config', 'Enable strict ARP by setting arp_ignore to 1 and arp_announce to 2', (c, v) => void (c.ipvs.strictARP = toBool(v))),
  flag('ipvs-tcp-timeout', 'duration', '0s', 'config', 'The timeout for idle IPVS TCP connections, 0 to leave as-is. (e.g. \'5s\', \'1m\', \'2h22m\').', (c, v) => void (c.ipvs.tcpTimeout = toDuration(v))),
  flag('ipvs-tcpfin-timeout', 'duration', '0s', 'config', 'The timeout for IPVS TCP connections after receiving a FIN packet, 0 to leave as-is. (e.g. \'5s\', \'1m\', \'2h22m\').', (c, v) => void (c.ipvs.tcpFinTimeout = toDuration(v))),
  flag('ipvs-udp-timeout', 'duration', '0s', 'config', 'The timeout for IPVS UDP packets, 0 to leave as-is. (e.g. \'5s\', \'1m\', \'2h22m\').', (c, v) => void (c.ipvs.udpTimeout = toDuration(v))),
  flag('detect-local-mode', 'LocalMode', '', 'config', 'Mode to use to detect local traffic. ' + IGNORED_WITH_CONFIG, (c, v) => void (c.detectLocalMode = v ?? '')),
  flag('pod-bridge-interface', 'string', '', 'config', 'A bridge interface name. When --detect-local-mode is set to BridgeInterface, kube-proxy will consider traffic to be local if it originates from this bridge.', (c, v) => void (c.detectLocal.bridgeInterface = v ?? '')),
  flag('pod-interface-name-prefix', 'string', '', 'config', 'An interface name prefix. When --detect-local-mode is set to InterfaceNamePrefix, kube-proxy will consider traffic to be local if it originates from any interface whose name begins with this prefix.', (c, v) => void (c.detectLocal.interfaceNamePrefix = v ?? '')),
  flag('cluster-cidr', 'string', '', 'config', 'The CIDR range of the pods in the cluster. (For dual-stack clusters, this can be a comma-separated dual-stack pair of CIDR ranges.). ' + IGNORED_WITH_CONFIG, (c, v) => void (c.clusterCIDR = v ?? '')),
  flag('nodeport-addresses', 'strings', '[]', 'config', 'A list of CIDR ranges that contain valid node IPs. The list may also contain any of the keywords \'primary\', \'localhost\', and \'all\', in any combination with each other and with CIDRs. Connections to NodePort services will only be accepted on node IPs in one of the indicated ranges. \'primary\' resolves to the node\'s primary IP(s) according to the Node object, \'localhost\' to the node\'s loopback addresses, and \'all\' to all addresses. If unset, NodePort connections will be accepted on all local IPs. ' + IGNORED_WITH_CONFIG, sliceFlag((c) => c.nodePortAddresses, (c, v) => (c.nodePortAddresses = v))),
  flag('oom-score-adj', 'int32', '-999', 'config', 'The oom-score-adj value for kube-proxy process. Values must be within the range [-1000, 1000]. ' + IGNORED_WITH_CONFIG, (c, v) => void (c.oomScoreAdj = toInt(v))),
  flag('conntrack-max-per-core', 'int32', '32768', 'config', 'Maximum number of NAT connections to track per CPU core (0 to leave the limit as-is and ignore conntrack-min).', (c, v) => void (c.conntrack.maxPerCore = toInt(v))),
  flag('conntrack-min', 'int32', '131072', 'config', 'Minimum number of conntrack entries to allocate, regardless of conntrack-max-per-core (set conntrack-max-per-core=0 to leave the limit as-is).', (c, v) => void (c.conntrack.min = toInt(v))),
  flag('conntrack-tcp-timeout-established', 'duration', '24h0m0s', 'config', 'Idle timeout for established TCP connections (0 to leave as-is)', (c, v) => void (c.conntrack.tcpEstablishedTimeout = toDuration(v))),
  flag('conntrack-tcp-timeout-close-wait', 'duration', '1h0m0s', 'config', 'NAT timeout for TCP connections in the CLOSE_WAIT state', (c, v) => void (c.conntrack.tcpCloseWaitTimeout = toDuration(v))),
  flag('conntrack-tcp-be-liberal', 'bool', 'false', 'config', 'Enable liberal mode for tracking TCP packets by setting nf_conntrack_tcp_be_liberal to 1', (c, v) => void (c.conntrack.tcpBeLiberal = toBool(v))),
  flag('conntrack-udp-timeout', 'duration', '0s', 'config', 'Idle timeout for UNREPLIED UDP connections (0 to leave as-is)', (c, v) => void (c.conntrack.udpTimeout = toDuration(v))),
  flag('conntrack-udp-timeout-stream', 'duration', '0s', 'config', 'Idle timeout for ASSURED UDP connections (0 to leave as-is)', (c, v) => void (c.conntrack.udpStreamTimeout = toDuration(v))),
  flag('config-sync-period', 'duration', '15m0s', 'config', 'How often configuration from the apiserver is refreshed. Must be greater than 0.', (c, v) => void (c.configSyncPeriod = toDuration(v))),
  flag('healthz-port', 'int32', '10256', 'config', 'The port to bind the health check server. Use 0 to disable.', (_c, v, x) => void (x.healthzPort = toInt(v)), { deprecated: 'This flag is deprecated and will be removed in a future release. Please use --healthz-bind-address instead.' }),
  flag('metrics-port', 'int32', '10249', 'config', 'The port to bind the metrics server. Use 0 to disable.', (_c, v, x) => void (x.metricsPort = toInt(v)), { deprecated: 'This flag is deprecated and will be removed in a future release. Please use --metrics-bind-address instead.' }),
  flag('logging-format', 'string', 'text', 'logging', 'Sets the log format. Permitted formats: "json" (gated by LoggingBetaOptions), "text".', (c, v) => void (c.logging.format = v ?? '')),
  flag('log-flush-frequency', 'duration', '5s', 'logging', 'Maximum number of seconds between log flushes', (c, v) => void (c.logging.flushFrequency = toDuration(v))),
  flag('v', 'Level', '0', 'logging', 'number for the log level verbosity', (c, v) => void (c.logging.verbosity = verbosity(v)), { shorthand: 'v' }),
  flag('vmodule', 'pattern=N,...', '', 'logging', 'comma-separated list of pattern=N settings for file-filtered logging (only works for text log format)', (c, v) => {
    c.logging.vmodule = [...(c.logging.vmodule ?? []), ...parseVmodule(v ?? '')];
  }),
  flag('log-text-split-stream', 'bool', 'false', 'logging', '[Alpha] In text format, write error messages to stderr and info messages to stdout.', (c, v) => void (c.logging.options.text.splitStream = toBool(v))),
  flag('log-text-info-buffer-size', 'quantity', '0', 'logging', '[Alpha] In text format with split output streams, the info messages can be buffered for a while to increase performance.', (c, v) => void (c.logging.options.text.infoBufferSize = v ?? '0')),
  flag('log-json-split-stream', 'bool', 'false', 'logging', '[Alpha] In JSON format, write error messages to stderr and info messages to stdout.', (c, v) => void (c.logging.options.json.splitStream = toBool(v))),
  flag('log-json-info-buffer-size', 'quantity', '0', 'logging', '[Alpha] In JSON format with split output streams, the info messages can be buffered for a while to increase performance.', (c, v) => void (c.logging.options.json.infoBufferSize = v ?? '0')),
  flag('version', 'version', 'false', 'control', '--version, --version=raw prints version information and quits; --version=vX.Y.Z... sets the reported version', (_c, v, x) => void (x.version = v ?? 'true'), { noValue: true }),
  flag('help', 'bool', 'false', 'control', 'help for kube-proxy', (_c, v, x) => void (x.help = toBool(v)), { shorthand: 'h' }),
  flag('boot-id-file', 'string', '/proc/sys/kernel/random/boot_id', 'control', 'Comma-separated list of files to check for boot-id. Use the first one that exists.', () => undefined, { inert: true }),
  flag('machine-id-file', 'string', '/etc/machine-id,/var/lib/dbus/machine-id', 'control', 'Comma-separated list of files to check for machine-id. Use the first one that exists.', () => undefined, { inert: true }),
  flag('manifests', 'string', '', 'extension', '[kube-proxy-ipvs extension] Read Services, EndpointSlices and Nodes from a YAML file or folder (watched) instead of an API server; wins over --kubeconfig, --master and clientConnection.kubeconfig.', (_c, v, x) => void (x.manifests = v)),
  flag('ipvs-rules-backend', 'string', 'iptables', 'config', '[kube-proxy-ipvs extension] What programs the packet-filter rules IPVS mode needs: "iptables" (the KUBE-* chains and ipsets, as kube-proxy) or "nftables" (one nftables table per family, over netlink).', (c, v) => void (c.ipvs.rulesBackend = v ?? '')),
  flag('netns', 'string', '', 'extension', '[kube-proxy-ipvs extension] Program the network namespace at this path (e.g. /run/netns/NAME) instead of the current one.', (_c, v, x) => void (x.netns = v)),
];

/** addressFromDeprecatedFlags: --healthz-port/--metrics-port, used only without --config and --write-config-to. */
export function addressWithPort(address: string, port: number): string {
  if (port === 0) return '';
  return appendPortIfNeeded(address, port);
}

/** `--help` text, from the table. */
export function usage(): string {
  const lines = FLAGS.filter((d) => !d.deprecated).map((d) => {
    const head = `${d.shorthand ? `-${d.shorthand}, ` : '    '}--${d.name}${d.noValue ? '' : ` ${d.type}`}`;
    const def = d.def !== '' && d.def !== 'false' && d.def !== '[]' && d.def !== '0s' ? ` (default ${d.type === 'string' || d.type === 'ip' || d.type === 'ipport' ? JSON.stringify(d.def) : d.def})` : '';
    return `  ${head.padEnd(48)} ${d.help}${def}`;
  });
  return `Usage:\n  kube-proxy [flags]\n  kube-proxy plan [flags]   [kube-proxy-ipvs extension] print what would be programmed\n\nFlags:\n${lines.join('\n')}\n`;
}
