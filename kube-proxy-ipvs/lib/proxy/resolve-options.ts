/**
 * A command line → the options the proxy runs with, in kube-proxy's order
 * (Options.Complete): flags write into a defaulted configuration; with
 * --config the file's configuration replaces it, except for
 * --hostname-override and the logging flags given, which still apply
 * (and --master, and this project's own flags). Then the mode and
 * local-detection defaults, the hostname override, the feature gates, and
 * the checks.
 *
 * Our extension: each other flag given alongside --config is named in a
 * warning (upstream drops them silently).
 */
import { hostname } from 'node:os';
import { defaultConfiguration } from './config-defaults.js';
import { loadConfigFile } from './config-file.js';
import { zeroConfiguration, type KubeProxyConfiguration } from './config-schema.js';
import { checkFeatureGates } from './feature-gates.js';
import { FlagError, splitFlags } from './flag-parser.js';
import { addressWithPort, defaultControl, FLAGS, type Control, type FlagDef } from './flags.js';
import { OptionsError, validateOptions, type DetectLocalMode, type IpvsOptions, type ProxyOptions } from './options.js';

/** A line to log once the logger exists (level, message, fields). */
export interface Notice {
  level: 'info' | 'warn';
  msg: string;
  fields?: Record<string, unknown>;
}

export interface ResolvedOptions {
  options: ProxyOptions;
  control: Control;
  /** The effective KubeProxyConfiguration (for --write-config-to and /configz). */
  config: KubeProxyConfiguration;
  notices: Notice[];
}

/** Parses argv into the flags given, the configuration they build and the control values. Throws FlagError for bad syntax or values. */
export function parseCommandLine(argv: readonly string[]): { given: FlagDef[]; flagsConfig: KubeProxyConfiguration; control: Control; notices: Notice[] } {
  const byName = new Map(FLAGS.map((d) => [d.name, d]));
  const { flags, args } = splitFlags(argv, FLAGS);
  // Upstream's Args check passes empty words, so a DaemonSet argument naming an unset $(VAR) is harmless; the error lists them all as Go's %q does.
  if (args.some((a) => a !== '')) throw new FlagError(`"kube-proxy" does not take any arguments, got [${args.map((a) => JSON.stringify(a)).join(' ')}]`);
  const control = defaultControl();
  const config = defaultConfiguration(zeroConfiguration());
  // The flag's default, not the file's: flags alone sync IPVS at most once a second (the internal MinSyncPeriod default).
  config.ipvs.minSyncPeriod = 1000;
  const given: FlagDef[] = [];
  const notices: Notice[] = [];
  for (const f of flags) {
    const def = byName.get(f.name)!;
    if (def.noValue && f.value === undefined && def.type === 'bool') {
      def.set(config, undefined, control);
    } else {
      try {
        def.set(config, f.value, control);
      } catch (e) {
        throw new FlagError(`invalid argument ${JSON.stringify(f.value ?? '')} for "${def.shorthand ? `-${def.shorthand}, ` : ''}--${def.name}" flag: ${(e as Error).message}`);
      }
    }
    if (def.deprecated && !given.includes(def)) notices.push({ level: 'warn', msg: `Flag --${def.name} has been deprecated, ${def.deprecated}` });
    if (!given.includes(def)) given.push(def);
  }
  return { given, flagsConfig: config, control, notices };
}

/** The whole resolution; `argv` excludes the program name. */
export function resolveOptions(argv: readonly string[]): ResolvedOptions {
  const { given, flagsConfig, control, notices } = parseCommandLine(argv);
  let config = flagsConfig;
  if (control.config === undefined && control.writeConfigTo === undefined) {
    config.healthzBindAddress = addressWithPort(config.healthzBindAddress, control.healthzPort);
    config.metricsBindAddress = addressWithPort(config.metricsBindAddress, control.metricsPort);
  }
  if (control.config !== undefined) {
    const loaded = loadConfigFile(control.config);
    if (loaded.lenientBecause) notices.push({ level: 'info', msg: 'Using lenient decoding as strict decoding failed', fields: { err: loaded.lenientBecause } });
    config = loaded.config;
    copyLoggingFlags(flagsConfig, config, given);
    for (const d of given.filter((g) => g.group === 'config')) {
      notices.push({ level: 'warn', msg: 'Flag ignored because --config is set (a kube-proxy-ipvs warning; kube-proxy ignores it silently)', fields: { flag: `--${d.name}` } });
    }
  }
  for (const d of given.filter((g) => g.inert && (control.config === undefined || g.group !== 'config'))) {
    notices.push({ level: 'warn', msg: 'Flag has no effect in IPVS mode', fields: { flag: `--${d.name}` } });
  }
  // platformApplyDefaults, for the one mode this proxy runs.
  if (config.mode === '') {
    notices.push({ level: 'info', msg: 'Using ipvs proxy (kube-proxy-ipvs runs only IPVS mode; kube-proxy would default to iptables)' });
    config.mode = 'ipvs';
  }
  if (config.detectLocalMode === '') config.detectLocalMode = 'ClusterCIDR';
  if (control.hostnameOverride !== undefined && control.hostnameOverride !== '') {
    const name = control.hostnameOverride.trim();
    if (name === '') throw new OptionsError('empty hostname-override is invalid');
    config.hostnameOverride = name.toLowerCase();
  }
  checkFeatureGates(config.featureGates ?? {});
  notices.push(...unusedFieldNotices(config));
  // The scheduler is not checked here: upstream asks the kernel when it makes the IPVS proxier (kernel/ipvs-proxier-check.ts).
  const options = validateOptions({ ...optionsOf(config, control), kubeProxyConfiguration: config });
  if (control.manifests !== undefined && (control.master !== undefined || config.clientConnection.kubeconfig !== '')) {
    notices.push({ level: 'info', msg: '--manifests given: Services come from it, not from the API server (a kube-proxy-ipvs extension)' });
  }
  return { options, control, config, notices };
}

/** copyLogsFromFlags: logging flags that were given win over the file; --vmodule entries are added after the file's. */
function copyLoggingFlags(from: KubeProxyConfiguration, to: KubeProxyConfiguration, given: FlagDef[]): void {
  const names = new Set(given.filter((d) => d.group === 'logging').map((d) => d.name));
  const l = to.logging;
  if (names.has('logging-format')) l.format = from.logging.format;
  if (names.has('log-flush-frequency')) l.flushFrequency = from.logging.flushFrequency;
  if (names.has('v')) l.verbosity = from.logging.verbosity;
  if (names.has('vmodule')) l.vmodule = [...(l.vmodule ?? []), ...(from.logging.vmodule ?? [])];
  if (names.has('log-text-split-stream')) l.options.text.splitStream = from.logging.options.text.splitStream;
  if (names.has('log-text-info-buffer-size')) l.options.text.infoBufferSize = from.logging.options.text.infoBufferSize;
  if (names.has('log-json-split-stream')) l.options.json.splitStream = from.logging.options.json.splitStream;
  if (names.has('log-json-info-buffer-size')) l.options.json.infoBufferSize = from.logging.options.json.infoBufferSize;
}

/** Fields set away from their defaults that only other modes or platforms read: named once. */
function unusedFieldNotices(c: KubeProxyConfiguration): Notice[] {
  const set: string[] = [];
  if (c.iptables.localhostNodePorts === false) set.push('iptables.localhostNodePorts');
  if (c.iptables.syncPeriod !== 30_000) set.push('iptables.syncPeriod');
  if (c.iptables.minSyncPeriod !== 1000) set.push('iptables.minSyncPeriod');
  if (c.nftables.masqueradeAll || c.nftables.masqueradeBit !== 14 || c.nftables.syncPeriod !== 30_000 || c.nftables.minSyncPeriod !== 1000) set.push('nftables');
  if (Object.values(c.winkernel).some((v) => v !== '' && v !== false)) set.push('winkernel');
  if (c.portRange !== '') set.push('portRange');
  if (c.windowsRunAsService) set.push('windowsRunAsService');
  if (c.enableProfiling) set.push('enableProfiling');
  if (c.showHiddenMetricsForVersion !== '') set.push('showHiddenMetricsForVersion');
  return set.length ? [{ level: 'info', msg: 'Configuration fields not used in IPVS mode', fields: { fields: set } }] : [];
}

/**
 * The node's name as newProxyServer takes it (nodeutil.GetHostname):
 * hostnameOverride from the file as from the flag, else the host name,
 * trimmed and lower-cased; blank is an error. Upstream asks for it only
 * after --write-config-to and --cleanup have exited, so those two run
 * without one.
 */
function nodeName(override: string, x: Control): string {
  const name = (override !== '' ? override : hostname()).trim();
  if (name !== '') return name.toLowerCase();
  if (x.writeConfigTo !== undefined || x.cleanup) return '';
  throw new OptionsError('empty hostname is invalid');
}

/** The configuration (converted as upstream converts v1alpha1 for IPVS mode) and the control values → ProxyOptions. */
export function optionsOf(c: KubeProxyConfiguration, x: Control): ProxyOptions {
  // The kernel takes whole seconds; upstream truncates the same way. A
  // negative value is left whole: upstream refuses any negative duration,
  // -500ms included, before it truncates.
  const seconds = (ms: number) => (ms < 0 ? ms : Math.trunc(ms / 1000) * 1000);
  const manifests = x.manifests;
  return {
    proxyMode: c.mode as 'ipvs',
    hostnameOverride: nodeName(c.hostnameOverride, x),
    bindAddress: c.bindAddress,
    // Split as written, as upstream's conversion: validation refuses " fd00::/48".
    clusterCIDRs: c.clusterCIDR === '' ? [] : c.clusterCIDR.split(','),
    nodePortAddresses: c.nodePortAddresses ?? [],
    masqueradeAll: c.iptables.masqueradeAll,
    masqueradeBit: c.iptables.masqueradeBit ?? 14,
    ipvs: {
      scheduler: c.ipvs.scheduler === '' ? 'rr' : c.ipvs.scheduler,
      syncPeriodMs: c.ipvs.syncPeriod,
      minSyncPeriodMs: c.ipvs.minSyncPeriod,
      excludeCIDRs: c.ipvs.excludeCIDRs ?? [],
      strictARP: c.ipvs.strictARP,
      tcpTimeoutMs: seconds(c.ipvs.tcpTimeout),
      tcpFinTimeoutMs: seconds(c.ipvs.tcpFinTimeout),
      udpTimeoutMs: seconds(c.ipvs.udpTimeout),
      rulesBackend: (c.ipvs.rulesBackend === '' ? 'iptables' : c.ipvs.rulesBackend) as IpvsOptions['rulesBackend'],
    },
    healthzBindAddress: c.healthzBindAddress,
    metricsBindAddress: c.metricsBindAddress,
    cleanup: x.cleanup,
    verbosity: c.logging.verbosity,
    kubeconfig: manifests === undefined && c.clientConnection.kubeconfig !== '' ? c.clientConnection.kubeconfig : undefined,
    master: manifests === undefined ? x.master : undefined,
    manifests,
    netns: x.netns,
    configFile: x.config,
    oomScoreAdj: c.oomScoreAdj,
    conntrack: {
      maxPerCore: c.conntrack.maxPerCore,
      min: c.conntrack.min,
      tcpEstablishedTimeoutMs: c.conntrack.tcpEstablishedTimeout,
      tcpCloseWaitTimeoutMs: c.conntrack.tcpCloseWaitTimeout,
      tcpBeLiberal: c.conntrack.tcpBeLiberal,
      udpTimeoutMs: c.conntrack.udpTimeout,
      udpStreamTimeoutMs: c.conntrack.udpStreamTimeout,
    },
    detectLocalMode: c.detectLocalMode as DetectLocalMode,
    detectLocal: { ...c.detectLocal },
    bindAddressHardFail: c.bindAddressHardFail,
    clientConnection: { ...c.clientConnection },
    configSyncPeriodMs: c.configSyncPeriod,
    featureGates: { ...(c.featureGates ?? {}) },
    logging: {
      format: c.logging.format as 'text' | 'json',
      verbosity: c.logging.verbosity,
      flushFrequencyMs: c.logging.flushFrequency,
      vmodule: c.logging.vmodule ?? [],
    },
  };
}
