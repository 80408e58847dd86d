/**
 * kube-proxy's checkBadConfig and checkBadIPConfig (cmd/kube-proxy/app,
 * newProxyServer), in its words: settings that point at the other IP
 * family than the node's primary one. All but two are logged and the start
 * goes on; a ClusterCIDR mode whose clusterCIDRs are all of the other
 * family on a single-stack host, and a NodeCIDR mode whose Node podCIDRs
 * are, end it, as they always have upstream.
 */
import { type AddressFamily, familyOf } from 'ipvs-netlink/address';
import { canonicalAddressSloppy, cidrFamilySloppy } from '../kubernetes/sloppy-address.js';
import { LOOPBACK, NODE_PORT_KEYWORDS } from '../desired/node-addresses.js';
import type { ProxyOptions } from './options.js';
import { IP_FAMILY } from '../kubernetes/model.js';

const OTHER: Record<AddressFamily, AddressFamily> = { inet: 'inet6', inet6: 'inet' };

export interface IPFamilySetting {
  primary: AddressFamily;
  /** This node's addresses, the primary one first (--bind-address's when it names one). */
  addresses: readonly string[];
  podCIDRs: readonly string[];
}

/** utilerrors.NewAggregate's text: one message alone, several bracketed and comma-joined (repeats once). */
export function aggregate(messages: readonly string[]): string | undefined {
  const unique = [...new Set(messages)];
  if (unique.length === 0) return undefined;
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
}

/** checkBadConfig: nodePortAddresses that leave NodePorts open on some family in use. */
export function badConfig(o: ProxyOptions, s: IPFamilySetting): string[] {
  const nodePort = nodePortCIDRs(o.nodePortAddresses, s.addresses);
  const anyDualStack = [o.clusterCIDRs, nodePort, o.ipvs.excludeCIDRs, s.podCIDRs].some(isDualStack);
  const primaryCount = nodePort.filter((c) => cidrFamilySloppy(c) === s.primary).length;
  const [p, other] = [IP_FAMILY[s.primary], IP_FAMILY[OTHER[s.primary]]];
  if (nodePort.length === 0) {
    return ['nodePortAddresses is unset; NodePort connections will be accepted on all local IPs. Consider using `--nodeport-addresses primary`'];
  }
  if (anyDualStack && primaryCount === nodePort.length) {
    return [`cluster appears to be dual-stack but nodePortAddresses contains only ${p} addresses; NodePort connections will be accepted on all local ${other} IPs`];
  }
  if (primaryCount === 0) {
    return [`cluster appears to be ${p}-primary but nodePortAddresses contains only ${other} addresses; NodePort connections will be accepted on all local ${p} IPs`];
  }
  return [];
}

/** checkBadIPConfig: the messages, and whether they end the start. */
export function badIPConfig(o: ProxyOptions, s: IPFamilySetting, dualStack: boolean): { errors: string[]; fatal: boolean } {
  const bad = OTHER[s.primary];
  const badV = bad === 'inet' ? '4' : '6';
  const clusterType = `${IP_FAMILY[s.primary]}-${dualStack ? 'primary' : 'only'}`;
  const errors: string[] = [];
  let fatal = false;
  if (allOf(o.clusterCIDRs, bad)) {
    errors.push(`cluster is ${clusterType} but clusterCIDRs contains only IPv${badV} addresses`);
    if (o.detectLocalMode === 'ClusterCIDR' && !dualStack) fatal = true;
  }
  if (allOf(s.podCIDRs, bad)) {
    errors.push(`cluster is ${clusterType} but node.spec.podCIDRs contains only IPv${badV} addresses`);
    if (o.detectLocalMode === 'NodeCIDR') fatal = true;
  }
  const sourceVip = o.kubeProxyConfiguration?.winkernel.sourceVip ?? '';
  if (familyOfAddress(sourceVip) === bad) errors.push(`cluster is ${clusterType} but winkernel.sourceVip is IPv${badV}`);
  // Only a problem when the other family is not served at all.
  if (!dualStack) {
    if (allOf(o.ipvs.excludeCIDRs, bad)) errors.push(`cluster is ${clusterType} but ipvs.excludeCIDRs contains only IPv${badV} addresses`);
    if (badBindAddress(o.healthzBindAddress, bad)) errors.push(`cluster is ${clusterType} but healthzBindAddress is IPv${badV}`);
    if (badBindAddress(o.metricsBindAddress, bad)) errors.push(`cluster is ${clusterType} but metricsBindAddress is IPv${badV}`);
  }
  return { errors, fatal };
}

/**
 * nodePortAddresses as kube-proxy holds them at the check: "primary" has
 * become the node IPs (/32, /128; none for loopback), and this proxy's
 * other keywords their ranges.
 */
function nodePortCIDRs(list: readonly string[], addresses: readonly string[]): string[] {
  return list.flatMap((entry) => {
    if (entry === 'primary') {
      return (['inet', 'inet6'] as const).flatMap((f) => {
        const ip = addresses.find((a) => familyOfAddress(a) === f);
        return ip === undefined || isLoopback(ip) ? [] : [`${ip}/${f === 'inet' ? 32 : 128}`];
      });
    }
    return Object.hasOwn(NODE_PORT_KEYWORDS, entry) ? [...NODE_PORT_KEYWORDS[entry]!] : [entry];
  });
}

/** badCIDRs: a list that is not empty and holds nothing but CIDRs of `family`. */
function allOf(cidrs: readonly string[], family: AddressFamily): boolean {
  return cidrs.length > 0 && cidrs.every((c) => cidrFamilySloppy(c) === family);
}

/** IsDualStackCIDRStrings: both families present, and every entry a CIDR. */
function isDualStack(cidrs: readonly string[]): boolean {
  const families = cidrs.map((c) => cidrFamilySloppy(c));
  return !families.includes(undefined) && families.includes('inet') && families.includes('inet6');
}

/** badBindAddress: an "IP:port" whose IP is of `family` and not 0.0.0.0 / ::. */
function badBindAddress(hostPort: string, family: AddressFamily): boolean {
  const m = /^\[([^\]]*)\]:[^:]*$/.exec(hostPort) ?? /^([^:[\]]*):[^:]*$/.exec(hostPort);
  const host = m?.[1] ?? '';
  const ip = canonicalAddressSloppy(host);
  return ip !== undefined && familyOf(ip) === family && ip !== '0.0.0.0' && ip !== '::';
}

/** netutils.IPFamilyOfString, with ParseIPSloppy. */
function familyOfAddress(address: string): AddressFamily | undefined {
  const ip = canonicalAddressSloppy(address);
  return ip === undefined ? undefined : familyOf(ip);
}

/** A loopback node IP (127.0.0.0/8 or ::1), as the start falls back to one: it names no node address. */
export function isLoopback(address: string): boolean {
  return address === LOOPBACK.inet6 || address.startsWith('127.');
}
