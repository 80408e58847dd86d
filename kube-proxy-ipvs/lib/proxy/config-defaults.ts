/**
 * kube-proxy's v1alpha1 defaulting (SetDefaults_KubeProxyConfiguration and
 * component-base's recommended logging configuration), applied to the
 * decoded object before anything reads it. A zero, empty or null field
 * takes the default, so kubeadm's config.conf, which lists every field
 * with its zero value, runs as kube-proxy runs it. A pointer field set
 * explicitly (`oomScoreAdj: 0`, `conntrack.maxPerCore: 0`) is kept: there
 * 0 means "leave the kernel's value".
 */
import { canonicalAddressSloppy } from '../kubernetes/sloppy-address.js';
import type { KubeProxyConfiguration } from './config-schema.js';

export const HEALTHZ_PORT = 10256;
export const METRICS_PORT = 10249;
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** proxyutil.AppendPortIfNeeded: a bare IP (read as ParseIPSloppy reads it) gets the port; anything else is left for validation to judge. */
export function appendPortIfNeeded(address: string, port: number): string {
  const ip = canonicalAddressSloppy(address);
  if (ip === undefined) return address;
  return ip.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

/** The default healthz and metrics hosts follow bindAddress's family. */
function defaultHosts(bindAddress: string): { healthz: string; metrics: string } {
  const ip = canonicalAddressSloppy(bindAddress);
  return ip !== undefined && ip.includes(':') ? { healthz: '[::]', metrics: '[::1]' } : { healthz: '0.0.0.0', metrics: '127.0.0.1' };
}

/** Returns a defaulted copy; the argument is not changed. */
export function defaultConfiguration(input: KubeProxyConfiguration): KubeProxyConfiguration {
  const c = structuredClone(input);
  if (c.bindAddress === '') c.bindAddress = '0.0.0.0';
  const hosts = defaultHosts(c.bindAddress);
  c.healthzBindAddress = c.healthzBindAddress === '' ? `${hosts.healthz}:${HEALTHZ_PORT}` : appendPortIfNeeded(c.healthzBindAddress, HEALTHZ_PORT);
  c.metricsBindAddress = c.metricsBindAddress === '' ? `${hosts.metrics}:${METRICS_PORT}` : appendPortIfNeeded(c.metricsBindAddress, METRICS_PORT);
  // qos.KubeProxyOOMScoreAdj
  c.oomScoreAdj ??= -999;

  c.iptables.masqueradeBit ??= 14;
  c.iptables.localhostNodePorts ??= true;
  if (c.iptables.syncPeriod === 0) c.iptables.syncPeriod = 30 * SECOND;
  if (c.iptables.minSyncPeriod === 0) c.iptables.minSyncPeriod = SECOND;
  if (c.ipvs.syncPeriod === 0) c.ipvs.syncPeriod = 30 * SECOND;
  c.nftables.masqueradeBit ??= 14;
  if (c.nftables.syncPeriod === 0) c.nftables.syncPeriod = 30 * SECOND;
  if (c.nftables.minSyncPeriod === 0) c.nftables.minSyncPeriod = SECOND;

  c.conntrack.maxPerCore ??= 32 * 1024;
  c.conntrack.min ??= 128 * 1024;
  c.conntrack.tcpEstablishedTimeout ??= 24 * HOUR;
  c.conntrack.tcpCloseWaitTimeout ??= HOUR;
  if (c.configSyncPeriod === 0) c.configSyncPeriod = 15 * MINUTE;

  if (c.clientConnection.contentType === '') c.clientConnection.contentType = 'application/vnd.kubernetes.protobuf';
  if (c.clientConnection.qps === 0) c.clientConnection.qps = 5;
  if (c.clientConnection.burst === 0) c.clientConnection.burst = 10;
  c.featureGates ??= {};

  if (c.logging.format === '') c.logging.format = 'text';
  if (c.logging.flushFrequency === 0) c.logging.flushFrequency = 5 * SECOND;
  return c;
}
