/**
 * Shape checks for the objects we read from YAML, with errors that name
 * the field (`spec.ports[1].port must be ...`). Only the fields the proxy
 * uses are checked; everything else passes through untouched.
 *
 * A value the API server accepts (now, or in a newer release) is never
 * refused where kube-proxy reads it leniently: an enum kube-proxy only
 * compares with one value (externalTrafficPolicy == Local, sessionAffinity
 * == ClientIP, an ingress's ipMode == VIP) takes any string, read as
 * kube-proxy reads it, so a value a later release adds cannot take a
 * whole Service down (ipFamilies, which is not read here, likewise); a
 * Node address entry without a type or an address, or a slice port
 * without a number, is passed over as kube-proxy passes it over.
 */
import type { EndpointSlice, Node, Service } from './model.js';
import { canonicalAddressSloppy, parseCidrSloppy } from './sloppy-address.js';

export class FieldError extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field} ${problem}`);
  }
}

type Obj = Record<string, unknown>;

function describe(v: unknown): string {
  return v === undefined ? 'nothing' : JSON.stringify(v);
}

function object(v: unknown, field: string, optional = false): Obj | undefined {
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new FieldError(field, `must be an object, got ${describe(v)}`);
  return v as Obj;
}

function array(v: unknown, field: string): unknown[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new FieldError(field, `must be a list, got ${describe(v)}`);
  return v;
}

function string(v: unknown, field: string, optional = true): void {
  if (v === undefined && optional) return;
  if (typeof v !== 'string' || (!optional && v === '')) throw new FieldError(field, `must be a ${optional ? '' : 'non-empty '}string, got ${describe(v)}`);
}

function integer(v: unknown, field: string, min: number, max: number, optional = true): void {
  if (v === undefined && optional) return;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new FieldError(field, `must be an integer from ${min} to ${max}, got ${describe(v)}`);
  }
}

function oneOf(v: unknown, field: string, allowed: readonly string[]): void {
  if (v === undefined) return;
  if (typeof v !== 'string' || !allowed.includes(v)) throw new FieldError(field, `must be one of ${allowed.join(', ')}, got ${describe(v)}`);
}

function boolean(v: unknown, field: string): void {
  if (v !== undefined && typeof v !== 'boolean') throw new FieldError(field, `must be true or false, got ${describe(v)}`);
}

// Addresses and CIDRs are read as kube-proxy reads them (sloppy-address.ts): an IPv4 part with
// leading zeros is decimal, as the API server still stores such values for objects made before
// its stricter checks.
function ip(v: unknown, field: string): void {
  if (typeof v !== 'string' || canonicalAddressSloppy(v.trim()) === undefined) throw new FieldError(field, `must be an IP address, got ${describe(v)}`);
}

/** An entry of a list kube-proxy skips blank entries of without a word (MapIPsByIPFamily): one the API server let through on an old cluster. */
function ipOrBlank(v: unknown, field: string): void {
  if (typeof v === 'string' && v.trim() === '') return;
  ip(v, field);
}

function cidr(v: unknown, field: string): void {
  try {
    if (typeof v !== 'string') throw new Error();
    // MapCIDRsByIPFamily trims, and skips what is then empty.
    if (v.trim() !== '') parseCidrSloppy(v.trim(), field);
  } catch {
    throw new FieldError(field, `must be a CIDR (address/prefix), got ${describe(v)}`);
  }
}

function metadata(v: unknown): void {
  const m = object(v, 'metadata')!;
  string(m.name, 'metadata.name', false);
  string(m.namespace, 'metadata.namespace');
  const labels = object(m.labels, 'metadata.labels', true);
  for (const [k, value] of Object.entries(labels ?? {})) string(value, `metadata.labels["${k}"]`, true);
}

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'] as const;

export function validateService(o: Obj): Service {
  metadata(o.metadata);
  const spec = object(o.spec, 'spec')!;
  oneOf(spec.type, 'spec.type', ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName']);
  if (spec.clusterIP !== undefined && spec.clusterIP !== 'None' && spec.clusterIP !== '') ip(spec.clusterIP, 'spec.clusterIP');
  array(spec.clusterIPs, 'spec.clusterIPs').forEach((v, i) => v === 'None' || ip(v, `spec.clusterIPs[${i}]`));
  // Not read here: each ClusterIP's own family decides which family serves it, where upstream's
  // GetClusterIPByFamily indexes clusterIPs by ipFamilies; the API server keeps the two in step.
  array(spec.ipFamilies, 'spec.ipFamilies').forEach((v, i) => string(v, `spec.ipFamilies[${i}]`));
  array(spec.ports, 'spec.ports').forEach((p, i) => {
    const port = object(p, `spec.ports[${i}]`)!;
    string(port.name, `spec.ports[${i}].name`);
    oneOf(port.protocol, `spec.ports[${i}].protocol`, PROTOCOLS);
    integer(port.port, `spec.ports[${i}].port`, 1, 65535, false);
    integer(port.nodePort, `spec.ports[${i}].nodePort`, 1, 65535);
  });
  array(spec.externalIPs, 'spec.externalIPs').forEach((v, i) => ipOrBlank(v, `spec.externalIPs[${i}]`));
  array(spec.loadBalancerSourceRanges, 'spec.loadBalancerSourceRanges').forEach((v, i) => cidr(v, `spec.loadBalancerSourceRanges[${i}]`));
  string(spec.externalTrafficPolicy, 'spec.externalTrafficPolicy');
  string(spec.internalTrafficPolicy, 'spec.internalTrafficPolicy');
  integer(spec.healthCheckNodePort, 'spec.healthCheckNodePort', 1, 65535);
  string(spec.sessionAffinity, 'spec.sessionAffinity');
  const affinity = object(spec.sessionAffinityConfig, 'spec.sessionAffinityConfig', true);
  const clientIP = object(affinity?.clientIP, 'spec.sessionAffinityConfig.clientIP', true);
  // The API server's limit: at most one day.
  integer(clientIP?.timeoutSeconds, 'spec.sessionAffinityConfig.clientIP.timeoutSeconds', 1, 86400);
  const status = object(o.status, 'status', true);
  const lb = object(status?.loadBalancer, 'status.loadBalancer', true);
  array(lb?.ingress, 'status.loadBalancer.ingress').forEach((v, i) => {
    const ingress = object(v, `status.loadBalancer.ingress[${i}]`)!;
    if (ingress.ip !== undefined) ipOrBlank(ingress.ip, `status.loadBalancer.ingress[${i}].ip`);
    string(ingress.ipMode, `status.loadBalancer.ingress[${i}].ipMode`);
  });
  return o as unknown as Service;
}

export function validateEndpointSlice(o: Obj): EndpointSlice {
  metadata(o.metadata);
  oneOf(o.addressType, 'addressType', ['IPv4', 'IPv6', 'FQDN']);
  if (o.addressType === undefined) throw new FieldError('addressType', 'is required (IPv4, IPv6 or FQDN)');
  array(o.endpoints, 'endpoints').forEach((v, i) => {
    const ep = object(v, `endpoints[${i}]`)!;
    const addresses = array(ep.addresses, `endpoints[${i}].addresses`);
    if (addresses.length === 0) throw new FieldError(`endpoints[${i}].addresses`, 'must list at least one address');
    if (o.addressType !== 'FQDN') addresses.forEach((a, j) => ip(a, `endpoints[${i}].addresses[${j}]`));
    const conditions = object(ep.conditions, `endpoints[${i}].conditions`, true);
    for (const c of ['ready', 'serving', 'terminating']) boolean(conditions?.[c], `endpoints[${i}].conditions.${c}`);
    string(ep.nodeName, `endpoints[${i}].nodeName`);
    string(ep.zone, `endpoints[${i}].zone`);
    const hints = object(ep.hints, `endpoints[${i}].hints`, true);
    for (const key of ['forZones', 'forNodes']) {
      array(hints?.[key], `endpoints[${i}].hints.${key}`).forEach((h, j) => string(object(h, `endpoints[${i}].hints.${key}[${j}]`)!.name, `endpoints[${i}].hints.${key}[${j}].name`, false));
    }
  });
  array(o.ports, 'ports').forEach((v, i) => {
    const port = object(v, `ports[${i}]`)!;
    string(port.name, `ports[${i}].name`);
    oneOf(port.protocol, `ports[${i}].protocol`, PROTOCOLS);
    // 0, as no number, is passed over where the port is used ("Ignoring invalid endpoint port").
    integer(port.port, `ports[${i}].port`, 0, 65535);
  });
  if (o.endpoints === undefined) (o as Obj).endpoints = [];
  return o as unknown as EndpointSlice;
}

export function validateNode(o: Obj): Node {
  metadata(o.metadata);
  const status = object(o.status, 'status', true);
  array(status?.addresses, 'status.addresses').forEach((v, i) => {
    const a = object(v, `status.addresses[${i}]`)!;
    // An empty or missing one is passed over, as GetNodeHostIPs passes over what is no IP of a type it reads.
    string(a.type, `status.addresses[${i}].type`);
    string(a.address, `status.addresses[${i}].address`);
  });
  return o as unknown as Node;
}
