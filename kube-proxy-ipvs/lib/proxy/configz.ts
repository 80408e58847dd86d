/**
 * What /configz serves: kube-proxy registers its internal configuration
 * (cmd/kube-proxy/app/server.go, newProxyServer: configz.New(GroupName),
 * cz.Set(config) with the *internal* KubeProxyConfiguration) and
 * component-base's configz marshals that pointer with encoding/json at
 * each request. The internal types carry no json tags, so the keys are Go's
 * field names in declaration order (pkg/proxy/apis/config/types.go, the
 * KubeProxyConfiguration struct and the structs it holds), except where a
 * tagged type is used: the logging configuration (component-base
 * logs/api/v1, camelCase), and TypeMeta, which is empty on an internal
 * object and so omitted. The internal ClientConnection (component-base
 * config/types.go) has no tags either.
 *
 * Built from the resolved v1alpha1 configuration as upstream's conversion
 * builds the internal one (pkg/proxy/apis/config/v1alpha1/conversion.go):
 * one SyncPeriod/MinSyncPeriod from the running mode's section, masquerade
 * from nftables' section in nftables mode and iptables' otherwise,
 * conntrack and oomScoreAdj under Linux, windowsRunAsService under
 * Windows, clusterCIDR split on commas into DetectLocal.ClusterCIDRs
 * (nil when empty); portRange and this proxy's ipvs.rulesBackend have no
 * internal field and do not show.
 */
import { familyOf } from 'ipvs-netlink/address';
import type { ControllerFactory } from '../kernel/controller-port.js';
import { isLoopback } from './bad-config.js';
import { formatDuration } from './duration.js';
import type { KubeProxyConfiguration } from './config-schema.js';
import { Float32, type GoJson } from './go-json.js';

type Obj = { [key: string]: GoJson };

/**
 * The registered value for one configuration: nodePortAddresses follow the
 * node IPs the start settles on, because newProxyServer rewrites them in
 * the registered object after cz.Set. The start hands its node to the
 * controller factory, so that is where they are taken.
 */
export class Configz {
  private nodeIPs?: readonly string[];

  constructor(private readonly config: KubeProxyConfiguration) {}

  /** The factory the proxy is given: it notes the node's addresses once (kube-proxy rewrites the config once), then makes the controller. */
  observing(factory: ControllerFactory): ControllerFactory {
    return (options) => {
      this.nodeIPs ??= [...options.node.addresses];
      return factory(options);
    };
  }

  /** The value the metrics server marshals under the group's name. */
  readonly value = (): GoJson => internalConfiguration(this.config, this.nodeIPs);
}

const duration = (ms: number | null): GoJson => (ms === null ? null : formatDuration(ms));
const strings = (list: readonly string[] | null): GoJson => (list === null ? null : [...list]);

/** The internal KubeProxyConfiguration, fields in types.go's order; `nodeIPs`: the start's node addresses, once known. */
export function internalConfiguration(c: KubeProxyConfiguration, nodeIPs?: readonly string[]): Obj {
  const running = c.mode === 'ipvs' ? c.ipvs : c.mode === 'nftables' ? c.nftables : c.iptables;
  const ct = c.conntrack;
  return {
    Linux: {
      Conntrack: {
        MaxPerCore: ct.maxPerCore,
        Min: ct.min,
        TCPEstablishedTimeout: duration(ct.tcpEstablishedTimeout),
        TCPCloseWaitTimeout: duration(ct.tcpCloseWaitTimeout),
        TCPBeLiberal: ct.tcpBeLiberal,
        UDPTimeout: formatDuration(ct.udpTimeout),
        UDPStreamTimeout: formatDuration(ct.udpStreamTimeout),
      },
      MasqueradeAll: c.mode === 'nftables' ? c.nftables.masqueradeAll : c.iptables.masqueradeAll,
      OOMScoreAdj: c.oomScoreAdj,
    },
    Windows: { RunAsService: c.windowsRunAsService },
    // A Go map: keys sorted.
    FeatureGates: c.featureGates === null ? null : Object.fromEntries(Object.keys(c.featureGates).sort().map((k) => [k, c.featureGates![k]!])),
    ClientConnection: {
      Kubeconfig: c.clientConnection.kubeconfig,
      AcceptContentTypes: c.clientConnection.acceptContentTypes,
      ContentType: c.clientConnection.contentType,
      QPS: new Float32(c.clientConnection.qps),
      Burst: c.clientConnection.burst,
    },
    Logging: logging(c.logging),
    HostnameOverride: c.hostnameOverride,
    BindAddress: c.bindAddress,
    HealthzBindAddress: c.healthzBindAddress,
    MetricsBindAddress: c.metricsBindAddress,
    BindAddressHardFail: c.bindAddressHardFail,
    EnableProfiling: c.enableProfiling,
    ShowHiddenMetricsForVersion: c.showHiddenMetricsForVersion,
    Mode: c.mode,
    IPTables: { MasqueradeBit: c.iptables.masqueradeBit, LocalhostNodePorts: c.iptables.localhostNodePorts },
    IPVS: {
      Scheduler: c.ipvs.scheduler,
      ExcludeCIDRs: strings(c.ipvs.excludeCIDRs),
      StrictARP: c.ipvs.strictARP,
      TCPTimeout: formatDuration(c.ipvs.tcpTimeout),
      TCPFinTimeout: formatDuration(c.ipvs.tcpFinTimeout),
      UDPTimeout: formatDuration(c.ipvs.udpTimeout),
    },
    Winkernel: {
      NetworkName: c.winkernel.networkName,
      SourceVip: c.winkernel.sourceVip,
      EnableDSR: c.winkernel.enableDSR,
      RootHnsEndpointName: c.winkernel.rootHnsEndpointName,
      ForwardHealthCheckVip: c.winkernel.forwardHealthCheckVip,
    },
    NFTables: { MasqueradeBit: c.nftables.masqueradeBit },
    DetectLocalMode: c.detectLocalMode,
    DetectLocal: {
      BridgeInterface: c.detectLocal.bridgeInterface,
      ClusterCIDRs: c.clusterCIDR === '' ? null : c.clusterCIDR.split(','),
      InterfaceNamePrefix: c.detectLocal.interfaceNamePrefix,
    },
    NodePortAddresses: servedNodePortAddresses(c.nodePortAddresses, nodeIPs),
    SyncPeriod: formatDuration(running.syncPeriod),
    MinSyncPeriod: formatDuration(running.minSyncPeriod),
    ConfigSyncPeriod: formatDuration(c.configSyncPeriod),
  };
}

/**
 * logsapi v1 LoggingConfiguration's JSON (its own tags): format and
 * vmodule omitempty; options, text and json are structs, which Go's
 * omitempty never leaves out; splitStream is omitted when false.
 */
function logging(l: KubeProxyConfiguration['logging']): Obj {
  const stream = (s: { splitStream: boolean; infoBufferSize: string }): Obj => ({ ...(s.splitStream ? { splitStream: true } : {}), infoBufferSize: s.infoBufferSize });
  return {
    ...(l.format !== '' ? { format: l.format } : {}),
    flushFrequency: formatDuration(l.flushFrequency),
    verbosity: l.verbosity,
    ...(l.vmodule?.length ? { vmodule: l.vmodule.map((v) => ({ filePattern: v.filePattern, verbosity: v.verbosity })) } : {}),
    options: { text: stream(l.options.text), json: stream(l.options.json) },
  };
}

/**
 * newProxyServer, right after cz.Set, rewrites `nodePortAddresses:
 * [primary]` to each family's node IP as a /32 or /128 (none for a
 * loopback stand-in), Go's nil slice when there is none. A "primary" among
 * other entries (1.37's lists) is replaced the same way where it stands;
 * the other entries are shown as written, as is any list before the node
 * is known.
 */
export function servedNodePortAddresses(list: readonly string[] | null, nodeIPs: readonly string[] | undefined): GoJson {
  if (list === null || nodeIPs === undefined || !list.includes('primary')) return strings(list);
  const out = list.flatMap((entry) => {
    if (entry !== 'primary') return [entry];
    return (['inet', 'inet6'] as const).flatMap((family) => {
      const ip = nodeIPs.find((a) => familyOf(a) === family);
      return ip === undefined || isLoopback(ip) ? [] : [`${ip}/${family === 'inet' ? 32 : 128}`];
    });
  });
  return out.length === 0 ? null : out;
}
