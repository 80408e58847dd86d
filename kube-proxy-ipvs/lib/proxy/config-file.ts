/**
 * `--config FILE`: a KubeProxyConfiguration read as kube-proxy reads it
 * (cmd/kube-proxy/app Options.loadConfig). Decoding is strict first: an
 * unknown or duplicated field fails it. Then, as upstream, it falls back
 * to lenient decoding (unknown fields dropped) and says why in a log line,
 * so a file written for another release still runs. A wrong type, a bad
 * duration, or an apiVersion/kind other than kubeproxy.config.k8s.io/
 * v1alpha1 KubeProxyConfiguration is an error either way. The result is
 * defaulted as upstream's v1alpha1 scheme defaults it.
 *
 * Upstream converts the file to JSON through yaml.v2 (sigs.k8s.io/yaml
 * YAMLToJSON) before it looks at any field, so two YAML 1.1 habits of that
 * library hold here too: an unquoted y/yes/on/n/no/off (in any of its
 * spellings) is a boolean wherever it stands, and only the first document
 * of the file is read.
 */
import { readFileSync } from 'node:fs';
import { isMap, isScalar, isSeq, parseAllDocuments, Scalar, type Node as YamlNode, type ScalarTag, type Tags } from 'yaml';
import { defaultConfiguration } from './config-defaults.js';
import { API_VERSION, DecodeError, GROUP, KIND, decodeConfiguration, jsonType, type KubeProxyConfiguration } from './config-schema.js';
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
    throw new OptionsError(goPathError('open', path, e));
  }
  return parseConfig(text);
}

/**
 * A failed file operation as Go's *os.PathError prints it ("open /x: no
 * such file or directory"), the words upstream's messages carry; Node's
 * own reads "ENOENT: no such file or directory, open '/x'".
 */
export function goPathError(op: string, path: string, e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const text = /^[A-Z0-9]+: (.*?), \w+ '/.exec(err.message ?? '')?.[1];
  return `${op} ${path}: ${text ?? err.message ?? String(e)}`;
}

/** yaml.v2's boolean spellings (resolve.go), for plain scalars only: quoted "yes" stays a string there too. */
const YAML_V2_TRUE = /^(?:y|Y|yes|Yes|YES|true|True|TRUE|on|On|ON)$/;
const YAML_V2_FALSE = /^(?:n|N|no|No|NO|false|False|FALSE|off|Off|OFF)$/;
const BOOL_TAG = 'tag:yaml.org,2002:bool';

function yamlV2Bool(test: RegExp, value: boolean): ScalarTag {
  return {
    tag: BOOL_TAG,
    default: true,
    test,
    identify: (v) => v === value,
    resolve: () => new Scalar(value),
  };
}

/**
 * The core schema with yaml.v2's booleans in place of YAML 1.2's. The
 * yaml-1.1 schema is not used whole: it reads 1:20 as a base-60 number,
 * which yaml.v2 leaves a string, and a timestamp as a Date. Writers pass
 * them too, so a string such as "y" is quoted and reads back a string.
 */
export function yamlV2Tags(tags: Tags): Tags {
  return tags.flatMap((t): Tags => (typeof t === 'object' && t.tag === BOOL_TAG ? [yamlV2Bool(YAML_V2_TRUE, true), yamlV2Bool(YAML_V2_FALSE, false)] : [t]));
}


export function parseConfig(text: string): LoadedConfig {
  // yaml.v2's Unmarshal reads the first document and never looks further.
  const doc = parseAllDocuments(text, { uniqueKeys: false, customTags: yamlV2Tags })[0];
  if (doc?.errors.length) throw new OptionsError(`failed to decode: yaml: ${doc.errors[0].message.split('\n')[0]}`);
  const duplicates: string[] = [];
  findDuplicates(doc?.contents, '', duplicates);
  const raw: unknown = doc?.toJS() ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new OptionsError(`failed to decode: json: cannot unmarshal ${jsonType(raw)} into Go value of type struct`);
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
