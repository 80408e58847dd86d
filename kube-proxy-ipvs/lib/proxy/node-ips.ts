/**
 * detectNodeIPs and the family check of kube-proxy's newProxyServer, in
 * its words: the primary family is the first node IP's (or
 * --bind-address's), IPv4 without either, and must be one the host
 * serves; a family without a node IP gets loopback (logged when it is the
 * primary one). The families served are the host's, whatever the Node
 * object declares. Between them, kube-proxy's checks of settings of the
 * other family (bad-config.ts): logged, or fatal where upstream's are.
 */
import type { Logger } from 'pino';
import { type AddressFamily, familyOf } from 'ipvs-netlink/address';
import { localDetector } from '../desired/local-detector.js';
import { aggregate, badConfig, badIPConfig, isLoopback } from './bad-config.js';
import type { HostFamilies } from '../kernel/host-families.js';
import { IP_FAMILY, type Node, type NodeInfo } from '../kubernetes/model.js';
import { nodeInfoOf } from '../kubernetes/node.js';
import { nodeInfoFor, proxyConfigOf, type ProxyOptions } from './options.js';

/** Throws, as kube-proxy exits, when no family or not the primary one is usable. */
export function startingNode(o: ProxyOptions, node: Node | undefined, found: HostFamilies, log: Logger): NodeInfo {
  checkHostFamilies(found, log);
  const info: NodeInfo = { ...nodeInfoFor(o, node), families: found.families };
  const declared = nodeInfoOf(info.name, node, undefined).addresses;
  if (declared.length) log.info({ NodeIPs: declared }, 'Successfully retrieved NodeIPs');
  const first = info.addresses[0];
  const primary: AddressFamily = first === undefined ? 'inet' : familyOf(first);
  if (first === undefined || isLoopback(first)) log.info("Can't determine this node's IP, assuming loopback; if this is incorrect, please set the --bind-address flag");
  const setting = { primary, addresses: info.addresses, podCIDRs: info.podCIDRs ?? [] };
  const warning = aggregate(badConfig(o, setting));
  if (warning !== undefined) log.error({ err: warning }, 'Kube-proxy configuration may be incomplete or incorrect');
  if (!found.families.includes(primary)) throw new Error(`no support for primary IP family "${IP_FAMILY[primary]}"`);
  if (found.families.length === 2) log.info({ 'primary ipFamily': IP_FAMILY[primary] }, 'kube-proxy running in dual-stack mode');
  else log.info({ ipFamily: IP_FAMILY[primary] }, 'kube-proxy running in single-stack mode');
  const ipConfig = badIPConfig(o, setting, found.families.length === 2);
  const problem = aggregate(ipConfig.errors);
  if (problem !== undefined && ipConfig.fatal) throw new Error(`kube-proxy configuration is incorrect: ${problem}`);
  if (problem !== undefined) log.error({ err: problem }, 'Kube-proxy configuration may be incomplete or incorrect');
  log.info({ node: info.name, addresses: info.addresses, families: info.families }, 'node');
  logMissingLocalDetector(o, primary, info.podCIDRs ?? [], log);
  return info;
}

/** platformCheckSupported's end: a family the host lacks is logged; with neither, the start fails. */
export function checkHostFamilies(found: HostFamilies, log: Logger): void {
  for (const m of found.missing) log.info({ ipFamily: IP_FAMILY[m.family], ...(m.error ? { error: m.error } : {}) }, m.message);
  if (found.families.length === 0) throw new Error(`iptables is not available on this host : ${found.missing[0]?.error ?? 'no family usable'}`);
}

/** getLocalDetectors' notes: a CIDR mode with no range of the primary family detects no local traffic in it. */
function logMissingLocalDetector(o: ProxyOptions, primary: AddressFamily, podCIDRs: readonly string[], log: Logger): void {
  if (localDetector(primary, proxyConfigOf(o), podCIDRs) !== undefined) return;
  if (o.detectLocalMode === 'ClusterCIDR') {
    log.info({ ipFamily: IP_FAMILY[primary], clusterCIDRs: o.clusterCIDRs }, 'Detect-local-mode set to ClusterCIDR, but no cluster CIDR specified for primary IP family');
  } else if (o.detectLocalMode === 'NodeCIDR') {
    log.info({ ipFamily: IP_FAMILY[primary], podCIDRs }, 'Detect-local-mode set to NodeCIDR, but no PodCIDR defined at node for primary IP family');
  }
}
