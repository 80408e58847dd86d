/**
 * `--config FILE`: a KubeProxyConfiguration read as kube-proxy reads it
 * (cmd/kube-proxy/app Options.loadConfig). Decoding is strict first: an
 * unknown or duplicated field fails it. Then, as upstream, it falls back
 * to lenient decoding (unknown fields dropped) and says why in a log line,
 * so a file written for another release still runs. A wrong type, a bad
 * duration, or an apiVersion/kind other than kubeproxy.config.k8s.io/
 * v1alpha1 KubeProxyConfiguration is an error either way. The result is
 * defaulted as upstream's v1alpha1 scheme defaults it.
 */
import { readFileSync } from 'node:fs';
import { isMap, isScalar, isSeq, parseDocument, type Node as YamlNode } from 'yaml';
import { defaultConfiguration } from './config-defaults.js';
import { API_VERSION, DecodeError, GROUP, KIND, decodeConfiguration, type KubeProxyConfiguration } from './config-schema.js';
import { OptionsError } from './options.js';

/**
 * Upstream's error is kept word for word; this says why (an extension): a
 * v1alpha2 KubeProxyConfiguration was proposed (KEP-784) and never merged,
 * so no released kube-proxy reads one and kubeadm writes v1alpha1.
 */
const V1ALPHA2_HINT = `: no kube-proxy release has a v1alpha2 configuration (it was proposed in KEP-784 and not merged); write the file as ${API_VERSION}`;

export interface LoadedConfig {
  /** The decoded and defaulted configuration. */
  config: KubeProxyConfiguration;
  /** Set when strict decoding failed and the lenient decode was used: upstream's error text, for its log line. */
  lenientBecause?: string;
}

export function loadConfigFile(path: string): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new OptionsError(`open ${path}: ${err.code === 'ENOENT' ? 'no such file or directory' : err.message}`);
  }
  return parseConfig(text);
}

export function parseConfig(text: string): LoadedConfig {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length) throw new OptionsError(`failed to decode: yaml: ${doc.errors[0].message.split('\n')[0]}`);
  const duplicates: string[] = [];
  findDuplicates(doc.contents, '', duplicates);
  const raw: unknown = doc.toJS() ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new OptionsError(`failed to decode: json: cannot unmarshal ${Array.isArray(raw) ? 'array' : typeof raw} into Go value of type struct`);
  const o = raw as Record<string, unknown>;
  if (typeof o.apiVersion !== 'string' || o.apiVersion === '') throw new OptionsError(`failed to decode: Object 'apiVersion' is missing in '${JSON.stringify(o)}'`);
  if (typeof o.kind !== 'string' || o.kind === '') throw new OptionsError(`failed to decode: Object 'Kind' is missing in '${JSON.stringify(o)}'`);
  if (o.apiVersion !== API_VERSION || o.kind !== KIND) {
    const group = o.apiVersion.split('/')[0];
    const why = group === GROUP ? `no kind "${o.kind}" is registered for version "${o.apiVersion}"` : `no kind "${o.kind}" is registered for version "${o.apiVersion}" (only ${KIND} in ${API_VERSION} is)`;
    throw new OptionsError(`failed to decode: ${why} in scheme "kube-proxy"${o.apiVersion === `${GROUP}/v1alpha2` ? V1ALPHA2_HINT : ''}`);
  }
  const unknown: string[] = [];
  let config: KubeProxyConfiguration;
  try {
    config = decodeConfiguration(o, unknown);
  } catch (e) {
    if (e instanceof DecodeError) throw new OptionsError(`failed to decode: ${e.message}`);
    throw e;
  }
  const strict = [...unknown.map((p) => `unknown field "${p}"`), ...duplicates.map((p) => `duplicate field "${p}"`)];
  const lenientBecause = strict.length ? `strict decoding error: ${strict.join(', ')}` : undefined;
  return { config: defaultConfiguration(config), lenientBecause };
}

/** Keys given twice in one mapping, as dotted paths (a strict-decoding error upstream). */
function findDuplicates(node: YamlNode | null | undefined | unknown, prefix: string, out: string[]): void {
  if (isMap(node)) {
    const seen = new Set<string>();
    for (const item of node.items) {
      const key = isScalar(item.key) ? String(item.key.value) : String(item.key);
      if (seen.has(key)) out.push(prefix + key);
      seen.add(key);
      findDuplicates(item.value, `${prefix}${key}.`, out);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => findDuplicates(item, `${prefix.replace(/\.$/, '')}[${i}].`, out));
  }
}
