/**
 * kube-proxy's command-line flags (names and meanings as in
 * cmd/kube-proxy/app/options.go) registered on a commander Command, and
 * their merge with --config: defaults, then the file, then the flags given
 * explicitly on the command line. Values are parsed as Go's flag package
 * would (durations as time.ParseDuration, booleans as --flag or
 * --flag=true|false) and unknown flags are refused by commander.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { loadConfigFile, splitList, type OptionsPatch } from './config-file.js';
import { parseDuration } from './duration.js';
import { defaultOptions, validateOptions, type ProxyOptions } from './options.js';

/** The raw values commander collects; only flags present on the command line are set. */
export interface RawFlags {
  proxyMode?: string;
  config?: string;
  hostnameOverride?: string;
  bindAddress?: string;
  clusterCidr?: string;
  nodeportAddresses?: string;
  masqueradeAll?: boolean;
  ipvsScheduler?: string;
  ipvsSyncPeriod?: number;
  ipvsMinSyncPeriod?: number;
  ipvsExcludeCidrs?: string;
  ipvsStrictArp?: boolean;
  ipvsTcpTimeout?: number;
  ipvsTcpfinTimeout?: number;
  ipvsUdpTimeout?: number;
  healthzBindAddress?: string;
  metricsBindAddress?: string;
  cleanup?: boolean;
  v?: number;
  kubeconfig?: string;
  master?: string;
  manifests?: string;
  netns?: string;
}

function duration(flag: string) {
  return (value: string): number => {
    try {
      return parseDuration(value);
    } catch (e) {
      throw new InvalidArgumentError(`${(e as Error).message} (${flag})`);
    }
  };
}

/** Go booleans: "--flag" alone is true; "--flag=false" is false. */
function bool(value: string | undefined): boolean {
  if (value === undefined) return true;
  const v = value.toLowerCase();
  if (['true', 't', '1'].includes(v)) return true;
  if (['false', 'f', '0'].includes(v)) return false;
  throw new InvalidArgumentError(`must be true or false, got "${value}"`);
}

function verbosity(value: string): number {
  // Accept klog's "-v=2" spelling too: commander hands "=2" for a short flag.
  const n = Number(value.replace(/^=/, ''));
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`must be a non-negative integer, got "${value}"`);
  return n;
}

const boolOption = (flags: string, description: string) => new Option(flags, description).argParser(bool);

export function addProxyFlags(cmd: Command): Command {
  return cmd
    .option('--proxy-mode <mode>', 'which proxy mode to use; only "ipvs" is supported')
    .option('--config <file>', 'the path to a KubeProxyConfiguration file; flags given on the command line override it')
    .option('--hostname-override <name>', 'the node name this proxy runs as (default: the host name)')
    .option('--bind-address <ip>', 'overrides the node\'s primary IP when not 0.0.0.0 / :: (default 0.0.0.0)')
    .option('--cluster-cidr <cidrs>', 'pod CIDRs, comma-separated; traffic from outside them to a ClusterIP is masqueraded')
    .option('--nodeport-addresses <cidrs>', 'CIDRs (or "primary") of the node addresses NodePorts are served on, comma-separated')
    .addOption(boolOption('--masquerade-all [bool]', 'SNAT all traffic sent to a ClusterIP'))
    .option('--ipvs-scheduler <name>', 'IPVS scheduler (rr, wrr, lc, wlc, lblc, lblcr, dh, sh, sed, nq, mh); default rr')
    .option('--ipvs-sync-period <duration>', 'the maximum interval between full resyncs of IPVS rules, e.g. 30s, 2h22m (default 30s)', duration('--ipvs-sync-period'))
    .option('--ipvs-min-sync-period <duration>', 'the minimum interval between syncs when objects change, e.g. 5s, 1m (default 0s: at once)', duration('--ipvs-min-sync-period'))
    .option('--ipvs-exclude-cidrs <cidrs>', 'CIDRs, comma-separated, whose virtual servers belong to someone else and are never removed')
    .addOption(boolOption('--ipvs-strict-arp [bool]', 'set arp_ignore=1 and arp_announce=2 so kube-ipvs0 addresses do not answer ARP'))
    .option('--ipvs-tcp-timeout <duration>', 'timeout of idle IPVS TCP connections; 0 leaves the kernel value', duration('--ipvs-tcp-timeout'))
    .option('--ipvs-tcpfin-timeout <duration>', 'timeout of IPVS TCP connections after FIN; 0 leaves the kernel value', duration('--ipvs-tcpfin-timeout'))
    .option('--ipvs-udp-timeout <duration>', 'timeout of IPVS UDP packets; 0 leaves the kernel value', duration('--ipvs-udp-timeout'))
    .option('--healthz-bind-address <ip:port>', 'where /healthz and /livez are served; empty disables (default 0.0.0.0:10256)')
    .option('--metrics-bind-address <ip:port>', 'where /metrics is served; empty disables (default 127.0.0.1:10249)')
    .addOption(boolOption('--cleanup [bool]', 'remove everything this proxy programs (IPVS, ipsets, kube-ipvs0, iptables chains) and exit'))
    .addOption(new Option('-v, --v <level>', 'log verbosity: 0-1 info, 2-4 debug, 5+ trace').argParser(verbosity))
    .option('--kubeconfig <file>', 'a kubeconfig file for the API server (default: in-cluster service account)')
    .option('--master <url>', 'the API server address; overrides the kubeconfig\'s')
    .option('--manifests <path>', 'read Services, EndpointSlices and Nodes from a YAML file or folder (watched) instead of an API server')
    .option('--netns <path>', 'program the network namespace at this path (e.g. /run/netns/NAME) instead of the current one');
}

/** Flags → the options patch they set. */
function patchFromFlags(f: RawFlags): OptionsPatch {
  const p: OptionsPatch = {};
  const ipvs: NonNullable<OptionsPatch['ipvs']> = {};
  if (f.proxyMode !== undefined) p.proxyMode = f.proxyMode as 'ipvs';
  if (f.hostnameOverride !== undefined) p.hostnameOverride = f.hostnameOverride.trim().toLowerCase();
  if (f.bindAddress !== undefined) p.bindAddress = f.bindAddress;
  if (f.clusterCidr !== undefined) p.clusterCIDRs = splitList(f.clusterCidr);
  if (f.nodeportAddresses !== undefined) p.nodePortAddresses = splitList(f.nodeportAddresses);
  if (f.masqueradeAll !== undefined) p.masqueradeAll = f.masqueradeAll;
  if (f.healthzBindAddress !== undefined) p.healthzBindAddress = f.healthzBindAddress;
  if (f.metricsBindAddress !== undefined) p.metricsBindAddress = f.metricsBindAddress;
  if (f.cleanup !== undefined) p.cleanup = f.cleanup;
  if (f.v !== undefined) p.verbosity = f.v;
  if (f.kubeconfig !== undefined) p.kubeconfig = f.kubeconfig;
  if (f.master !== undefined) p.master = f.master;
  if (f.manifests !== undefined) p.manifests = f.manifests;
  if (f.netns !== undefined) p.netns = f.netns;
  if (f.ipvsScheduler !== undefined) ipvs.scheduler = f.ipvsScheduler;
  if (f.ipvsSyncPeriod !== undefined) ipvs.syncPeriodMs = f.ipvsSyncPeriod;
  if (f.ipvsMinSyncPeriod !== undefined) ipvs.minSyncPeriodMs = f.ipvsMinSyncPeriod;
  if (f.ipvsExcludeCidrs !== undefined) ipvs.excludeCIDRs = splitList(f.ipvsExcludeCidrs);
  if (f.ipvsStrictArp !== undefined) ipvs.strictARP = f.ipvsStrictArp;
  if (f.ipvsTcpTimeout !== undefined) ipvs.tcpTimeoutMs = f.ipvsTcpTimeout;
  if (f.ipvsTcpfinTimeout !== undefined) ipvs.tcpFinTimeoutMs = f.ipvsTcpfinTimeout;
  if (f.ipvsUdpTimeout !== undefined) ipvs.udpTimeoutMs = f.ipvsUdpTimeout;
  if (Object.keys(ipvs).length) p.ipvs = ipvs;
  return p;
}

function applyPatch(base: ProxyOptions, patch: OptionsPatch): ProxyOptions {
  const { ipvs, ...rest } = patch;
  return { ...base, ...rest, ipvs: { ...base.ipvs, ...ipvs } };
}

export interface ResolvedOptions {
  options: ProxyOptions;
  /** Config-file fields present but not acted on (logged at start). */
  ignoredConfigFields: string[];
}

/** defaults ← --config file ← explicit flags, then validated. */
export function resolveOptions(flags: RawFlags): ResolvedOptions {
  let options = defaultOptions();
  let ignored: string[] = [];
  if (flags.config !== undefined) {
    const file = loadConfigFile(flags.config);
    options = applyPatch(options, file.patch);
    options.configFile = flags.config;
    ignored = file.ignored;
  }
  options = applyPatch(options, patchFromFlags(flags));
  return { options: validateOptions(options), ignoredConfigFields: ignored };
}
