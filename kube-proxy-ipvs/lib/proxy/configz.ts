/**
 * The body of /configz on the metrics server, as kube-proxy 1.36+ serves it
 * (component-base configz): {"kubeproxy.config.k8s.io": <the effective
 * v1alpha1 KubeProxyConfiguration with kind and apiVersion>}, fields in the
 * Go struct's order, durations as Go strings.
 */
import { encodeConfiguration, GROUP, type KubeProxyConfiguration } from './config-schema.js';

export function configzBody(config: KubeProxyConfiguration): string {
  return JSON.stringify({ [GROUP]: encodeConfiguration(config) });
}
