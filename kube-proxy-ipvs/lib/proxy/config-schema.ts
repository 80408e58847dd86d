/**
 * KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) as a table of
 * its fields, in the Go struct's order, with the JSON type each takes. One
 * table drives decoding (YAML → the typed object, strict or lenient, as
 * apimachinery's decoder behaves for this type) and encoding (the object →
 * YAML with sorted keys as --write-config-to and kubeadm write it; /configz
 * serves the internal configuration instead, configz.ts).
 *
 * In memory, durations are milliseconds, pointer fields are null when
 * unset, and every field is present with Go's zero value when the file
 * omits it, so defaulting can treat "absent" and "zero" alike, as
 * upstream's must.
 */
import { parseDuration, formatDuration } from './duration.js';

export type FieldType =
  | 'string'
  | 'bool'
  | 'int32'
  | 'uint32'
  | 'float'
  | 'duration'
  | '*int32'
  | '*bool'
  | '*duration'
  /** []string: null when unset. */
  | 'strings'
  /** map[string]bool. */
  | 'boolMap'
  /** logging.flushFrequency: a duration string or a number of nanoseconds. */
  | 'flush'
  /** resource.QuantityValue, kept as its text. */
  | 'quantity'
  /** logging.vmodule: [{filePattern, verbosity}]. */
  | 'vmodule'
  | Schema;

export interface Field {
  name: string;
  type: FieldType;
  /** Go's omitempty: left out of the output when zero. */
  omitempty?: boolean;
}
export type Schema = readonly Field[];

const f = (name: string, type: FieldType, omitempty = false): Field => ({ name, type, omitempty });

const LOG_STREAM: Schema = [f('splitStream', 'bool', true), f('infoBufferSize', 'quantity')];

export const KUBE_PROXY_CONFIGURATION: Schema = [
  f('featureGates', 'boolMap', true),
  f('clientConnection', [f('kubeconfig', 'string'), f('acceptContentTypes', 'string'), f('contentType', 'string'), f('qps', 'float'), f('burst', 'int32')]),
  f('logging', [
    f('format', 'string', true),
    f('flushFrequency', 'flush'),
    f('verbosity', 'uint32'),
    f('vmodule', 'vmodule', true),
    f('options', [f('text', LOG_STREAM), f('json', LOG_STREAM)]),
  ]),
  f('hostnameOverride', 'string'),
  f('bindAddress', 'string'),
  f('healthzBindAddress', 'string'),
  f('metricsBindAddress', 'string'),
  f('bindAddressHardFail', 'bool'),
  f('enableProfiling', 'bool'),
  f('showHiddenMetricsForVersion', 'string'),
  f('mode', 'string'),
  f('iptables', [f('masqueradeBit', '*int32'), f('masqueradeAll', 'bool'), f('localhostNodePorts', '*bool'), f('syncPeriod', 'duration'), f('minSyncPeriod', 'duration')]),
  f('ipvs', [
    f('syncPeriod', 'duration'),
    f('minSyncPeriod', 'duration'),
    f('scheduler', 'string'),
    f('excludeCIDRs', 'strings'),
    f('strictARP', 'bool'),
    f('tcpTimeout', 'duration'),
    f('tcpFinTimeout', 'duration'),
    f('udpTimeout', 'duration'),
    // A kube-proxy-ipvs extension: left out of what is written when empty, so kubeadm's files round-trip.
    f('rulesBackend', 'string', true),
  ]),
  f('nftables', [f('masqueradeBit', '*int32'), f('masqueradeAll', 'bool'), f('syncPeriod', 'duration'), f('minSyncPeriod', 'duration')]),
  f('winkernel', [f('networkName', 'string'), f('sourceVip', 'string'), f('enableDSR', 'bool'), f('rootHnsEndpointName', 'string'), f('forwardHealthCheckVip', 'bool')]),
  f('detectLocalMode', 'string'),
  f('detectLocal', [f('bridgeInterface', 'string'), f('interfaceNamePrefix', 'string')]),
  f('clusterCIDR', 'string'),
  f('nodePortAddresses', 'strings'),
  f('oomScoreAdj', '*int32'),
  f('conntrack', [
    f('maxPerCore', '*int32'),
    f('min', '*int32'),
    f('tcpEstablishedTimeout', '*duration'),
    f('tcpCloseWaitTimeout', '*duration'),
    f('tcpBeLiberal', 'bool'),
    f('udpTimeout', 'duration'),
    f('udpStreamTimeout', 'duration'),
  ]),
  f('configSyncPeriod', 'duration'),
  f('portRange', 'string'),
  f('windowsRunAsService', 'bool', true),
];

export const GROUP = 'kubeproxy.config.k8s.io';
export const API_VERSION = `${GROUP}/v1alpha1`;
export const KIND = 'KubeProxyConfiguration';

interface LogStream {
  splitStream: boolean;
  infoBufferSize: string;
}

/** The decoded v1alpha1 object (durations in milliseconds). */
export interface KubeProxyConfiguration {
  featureGates: Record<string, boolean> | null;
  clientConnection: { kubeconfig: string; acceptContentTypes: string; contentType: string; qps: number; burst: number };
  logging: {
    format: string;
    flushFrequency: number;
    verbosity: number;
    vmodule: Array<{ filePattern: string; verbosity: number }> | null;
    options: { text: LogStream; json: LogStream };
  };
  hostnameOverride: string;
  bindAddress: string;
  healthzBindAddress: string;
  metricsBindAddress: string;
  bindAddressHardFail: boolean;
  enableProfiling: boolean;
  showHiddenMetricsForVersion: string;
  mode: string;
  iptables: { masqueradeBit: number | null; masqueradeAll: boolean; localhostNodePorts: boolean | null; syncPeriod: number; minSyncPeriod: number };
  ipvs: {
    syncPeriod: number;
    minSyncPeriod: number;
    scheduler: string;
    excludeCIDRs: string[] | null;
    strictARP: boolean;
    tcpTimeout: number;
    tcpFinTimeout: number;
    udpTimeout: number;
    /** Extension: "iptables" (the default when empty) or "nftables". */
    rulesBackend: string;
  };
  nftables: { masqueradeBit: number | null; masqueradeAll: boolean; syncPeriod: number; minSyncPeriod: number };
  winkernel: { networkName: string; sourceVip: string; enableDSR: boolean; rootHnsEndpointName: string; forwardHealthCheckVip: boolean };
  detectLocalMode: string;
  detectLocal: { bridgeInterface: string; interfaceNamePrefix: string };
  clusterCIDR: string;
  nodePortAddresses: string[] | null;
  oomScoreAdj: number | null;
  conntrack: {
    maxPerCore: number | null;
    min: number | null;
    tcpEstablishedTimeout: number | null;
    tcpCloseWaitTimeout: number | null;
    tcpBeLiberal: boolean;
    udpTimeout: number;
    udpStreamTimeout: number;
  };
  configSyncPeriod: number;
  portRange: string;
  windowsRunAsService: boolean;
}

type Obj = Record<string, unknown>;

/** An error apimachinery's decoder reports whatever the strictness: a wrong type, a bad duration. */
export class DecodeError extends Error {}

function zeroOf(type: FieldType): unknown {
  if (typeof type !== 'string') return zeroObject(type);
  switch (type) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'quantity':
      return '0';
    case 'int32':
    case 'uint32':
    case 'float':
    case 'duration':
    case 'flush':
      return 0;
    default:
      return null;
  }
}

function zeroObject(schema: Schema): Obj {
  return Object.fromEntries(schema.map((fl) => [fl.name, zeroOf(fl.type)]));
}

/** The Go zero value of the whole configuration: what an empty document decodes to. */
export function zeroConfiguration(): KubeProxyConfiguration {
  return zeroObject(KUBE_PROXY_CONFIGURATION) as unknown as KubeProxyConfiguration;
}

/** A JSON value's type as Go's encoding/json names it in an UnmarshalTypeError ("bool", not "boolean"). */
export const jsonType = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v === 'boolean' ? 'bool' : typeof v;

const GO_TYPE: Record<string, string> = {
  string: 'string', bool: 'bool', int32: 'int32', uint32: 'uint32', float: 'float32', duration: 'string', '*int32': 'int32',
  '*bool': 'bool', '*duration': 'string', strings: '[]string', boolMap: 'map[string]bool', flush: 'string', quantity: 'string', vmodule: '[]VModuleItem',
};

/**
 * Decodes a parsed document's body (apiVersion and kind already checked)
 * into the typed object. Unknown fields are collected in `unknown` (dotted
 * paths) and dropped; the caller decides whether that is an error (strict)
 * or a logged fallback (lenient).
 */
export function decodeConfiguration(doc: Obj, unknown: string[]): KubeProxyConfiguration {
  const rest = { ...doc };
  delete rest.apiVersion;
  delete rest.kind;
  return decodeObject(rest, KUBE_PROXY_CONFIGURATION, '', unknown) as unknown as KubeProxyConfiguration;
}

function decodeObject(v: Obj, schema: Schema, prefix: string, unknown: string[]): Obj {
  const out = zeroObject(schema);
  const byName = new Map(schema.map((fl) => [fl.name, fl]));
  for (const [key, value] of Object.entries(v)) {
    const fl = byName.get(key);
    if (!fl) {
      unknown.push(prefix + key);
      continue;
    }
    out[key] = decodeValue(value, fl.type, prefix + key, unknown);
  }
  return out;
}

function mismatch(value: unknown, type: FieldType, path: string): never {
  const goType = typeof type === 'string' ? GO_TYPE[type] : 'struct';
  throw new DecodeError(`json: cannot unmarshal ${jsonType(value)} into Go struct field ${KIND}.${path} of type ${goType}`);
}

function decodeValue(value: unknown, type: FieldType, path: string, unknown: string[]): unknown {
  if (typeof type !== 'string') {
    // JSON null leaves a struct at its zero value.
    if (value === null) return zeroObject(type);
    if (jsonType(value) !== 'object') mismatch(value, type, path);
    return decodeObject(value as Obj, type, `${path}.`, unknown);
  }
  if (value === null) return zeroOf(type);
  switch (type) {
    case 'string':
      if (typeof value !== 'string') mismatch(value, type, path);
      return value;
    case 'bool':
    case '*bool':
      if (typeof value !== 'boolean') mismatch(value, type, path);
      return value;
    case 'int32':
    case '*int32':
    case 'uint32': {
      if (typeof value !== 'number') mismatch(value, type, path);
      const [lo, hi] = type === 'uint32' ? [0, 2 ** 32 - 1] : [-(2 ** 31), 2 ** 31 - 1];
      if (!Number.isInteger(value) || value < lo || value > hi) throw new DecodeError(`json: cannot unmarshal number ${value} into Go struct field ${KIND}.${path} of type ${GO_TYPE[type]}`);
      return value;
    }
    case 'float':
      if (typeof value !== 'number') mismatch(value, type, path);
      return value;
    case 'duration':
    case '*duration':
      if (typeof value !== 'string') mismatch(value, type, path);
      return goDuration(value, path);
    case 'flush':
      if (typeof value === 'number') return value / 1e6;
      if (typeof value !== 'string') mismatch(value, type, path);
      return goDuration(value, path);
    case 'quantity':
      if (typeof value !== 'string' && typeof value !== 'number') mismatch(value, type, path);
      return String(value);
    case 'strings':
      if (!Array.isArray(value) || value.some((s) => typeof s !== 'string')) mismatch(value, type, path);
      return [...value];
    case 'boolMap': {
      if (jsonType(value) !== 'object') mismatch(value, type, path);
      for (const b of Object.values(value as Obj)) if (typeof b !== 'boolean') mismatch(b, 'bool', path);
      return { ...(value as Record<string, boolean>) };
    }
    case 'vmodule': {
      if (!Array.isArray(value)) mismatch(value, type, path);
      return value.map((item, i) => {
        const o = decodeObject(item as Obj, [f('filePattern', 'string'), f('verbosity', 'uint32')], `${path}[${i}].`, unknown);
        return o as { filePattern: string; verbosity: number };
      });
    }
  }
}

function goDuration(text: string, path: string): number {
  try {
    return parseDuration(text);
  } catch {
    throw new DecodeError(`time: invalid duration ${JSON.stringify(text)} (${KIND}.${path})`);
  }
}

function isZero(value: unknown, type: FieldType): boolean {
  if (value === null || value === undefined || value === '' || value === false || value === 0) return true;
  if (type === 'boolMap') return Object.keys(value as Obj).length === 0;
  if (type === 'vmodule' || type === 'strings') return (value as unknown[]).length === 0;
  return false;
}

function encodeValue(value: unknown, type: FieldType): unknown {
  if (typeof type !== 'string') return encodeObject(value as Obj, type);
  if (value === null) return null;
  switch (type) {
    case 'duration':
    case '*duration':
    case 'flush':
      return formatDuration(value as number);
    case 'vmodule':
      return (value as Array<{ filePattern: string; verbosity: number }>).map((v) => ({ filePattern: v.filePattern, verbosity: v.verbosity }));
    case 'strings':
      return [...(value as string[])];
    case 'boolMap':
      return { ...(value as Obj) };
    default:
      return value;
  }
}

function encodeObject(v: Obj, schema: Schema): Obj {
  const out: Obj = {};
  for (const fl of schema) {
    if (fl.omitempty && isZero(v[fl.name], fl.type)) continue;
    out[fl.name] = encodeValue(v[fl.name], fl.type);
  }
  return out;
}

/**
 * The object as upstream's JSON encoding writes it: kind and apiVersion
 * first, then the fields in struct order, durations as Go strings, omitempty
 * fields left out when zero.
 */
export function encodeConfiguration(c: KubeProxyConfiguration): Obj {
  return { kind: KIND, apiVersion: API_VERSION, ...encodeObject(asConverted(c) as unknown as Obj, KUBE_PROXY_CONFIGURATION) };
}

/**
 * What upstream's internal → v1alpha1 conversion gives back: its internal
 * configuration keeps one syncPeriod, one minSyncPeriod and one
 * masqueradeAll, and the conversion writes them into the running mode's
 * section only, so the other modes' sync periods come out as 0s and
 * nftables.masqueradeAll as false outside nftables mode.
 */
function asConverted(c: KubeProxyConfiguration): KubeProxyConfiguration {
  const out = structuredClone(c);
  const mode = c.mode === 'ipvs' || c.mode === 'nftables' ? c.mode : 'iptables';
  for (const other of (['iptables', 'ipvs', 'nftables'] as const).filter((m) => m !== mode)) {
    out[other].syncPeriod = 0;
    out[other].minSyncPeriod = 0;
  }
  if (mode === 'nftables') out.iptables.masqueradeAll = false;
  else out.nftables.masqueradeAll = false;
  return out;
}

/** Keys sorted at every level, as sigs.k8s.io/yaml writes them. */
export function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortedKeys((v as Obj)[k])]),
  );
}
