/**
 * Reads Services, EndpointSlices and Nodes from YAML: one file or a folder
 * (*.yaml, *.yml, *.json, in name order), multi-document files and
 * `kind: List`. Other kinds (Deployments...) are skipped.
 *
 * Two ways to read:
 *  - loadManifests() is strict (the `plan` command): the first bad object
 *    throws a ManifestError naming the file, the object and the field.
 *  - readDocuments() and parseManifestText() collect, for one file's text:
 *    every good object comes back with the file it came from, every bad one
 *    as a ManifestError, and one bad object never hides the others (the
 *    proxy's manifests source, which keeps each file's result and reads
 *    again only the files and documents that changed).
 *
 * A file whose text is JSON (every `.json` file, and a YAML file holding a
 * single JSON value) is read with JSON.parse, tens of times faster than the
 * YAML parser; if JSON.parse refuses it, the YAML parser reads it as before
 * (JSON is YAML), so a broken file gets the YAML parser's message.
 *
 * The YAML parser is js-yaml, with YAML 1.2's core schema. The `yaml`
 * package (which reads the proxy's config file and kubeconfigs, small
 * files where its positions and comments matter) parses manifests about
 * ten times slower: 13.8 of the 23 s a 10,000-Service cold start took in
 * the sandbox. Manifests are read by this module only, so `plan` and the
 * proxy always read a file alike.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { naturalCompare } from 'ipvs-netlink/address';
import { CORE_SCHEMA, loadAll, YAMLException } from 'js-yaml';
import type { EndpointSlice, Node, Service } from './model.js';
import { FieldError, validateEndpointSlice, validateNode, validateService } from './validate.js';

export interface Manifests {
  services: Service[];
  endpointSlices: EndpointSlice[];
  nodes: Node[];
}

export type ManifestKind = 'Service' | 'EndpointSlice' | 'Node';

export type ManifestObject = (
  | { kind: 'Service'; object: Service }
  | { kind: 'EndpointSlice'; object: EndpointSlice }
  | { kind: 'Node'; object: Node }
) & {
  file: string;
  /**
   * A digest of the object's source (its YAML document's text, or for an
   * item of a `kind: List` its JSON): equal digests mean an unchanged
   * object, so a reload compares digests instead of objects.
   */
  digest: string;
};

/** Who a rejected object is, when it says so clearly enough to be matched with an earlier version of itself. */
export interface ObjectIdentity {
  kind: ManifestKind;
  /** undefined for Nodes (cluster-scoped); "default" when a namespaced object names none. */
  namespace?: string;
  name: string;
}

export class ManifestError extends Error {
  constructor(
    readonly file: string,
    /** "Service demo/web", "Service (document 2)"; undefined when the document itself could not be read. */
    readonly object: string | undefined,
    readonly field: string | undefined,
    readonly problem: string,
    /** Set when the object's kind and name are readable, even though the object is not valid. */
    readonly identity?: ObjectIdentity,
  ) {
    super(`${file}: ${object ? `${object}: ` : ''}${problem}`);
    this.name = 'ManifestError';
  }
}

/** Strict: throws the first bad object or document (`plan`). A missing path throws too. */
export function loadManifests(path: string): Manifests {
  const m: Manifests = { services: [], endpointSlices: [], nodes: [] };
  for (const file of manifestFiles(path)) {
    const { objects, errors } = readManifestFile(file);
    if (errors.length > 0) throw errors[0];
    for (const o of objects) {
      if (o.kind === 'Service') m.services.push(o.object);
      else if (o.kind === 'EndpointSlice') m.endpointSlices.push(o.object);
      else m.nodes.push(o.object);
    }
  }
  return m;
}

export interface FileRead {
  objects: ManifestObject[];
  errors: ManifestError[];
}

/** One manifest file, read and parsed; a file that cannot be read is one error. */
function readManifestFile(file: string): FileRead {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    // Removed or replaced between the listing and the read (an editor saving): unreadable this time.
    return { objects: [], errors: [new ManifestError(file, undefined, undefined, `cannot read: ${(e as Error).message}`)] };
  }
  return parseManifestText(file, text);
}

/** The objects and errors of one file's text (`file` names them). */
export function parseManifestText(file: string, text: string): FileRead {
  const out: FileRead = { objects: [], errors: [] };
  for (const doc of readDocuments(file, text)) {
    out.objects.push(...doc.objects);
    out.errors.push(...doc.errors);
  }
  return out;
}

/**
 * One document of a file, or the whole file when it could not be read
 * document by document (`digest` undefined: nothing to reuse it by).
 */
export interface DocumentRead {
  /** Of the document's text: a document with the same digest holds the same objects. */
  digest?: string;
  /** True when `known(digest)` said so: not parsed, objects and errors left empty. */
  known: boolean;
  objects: ManifestObject[];
  errors: ManifestError[];
}

/**
 * A file's text document by document, each parsed on its own (JSON.parse
 * when its text is JSON), with a digest of its text; documents whose
 * digest `known()` accepts are not parsed at all (the caller has them
 * from an earlier read of the file), so an edit of one document of a big
 * file costs that document. A document with a YAML error is that
 * document's error, with its line in the file; the others read as usual.
 * A file with YAML directives (%TAG...), or whose text between two
 * markers turns out to hold more than one document, is parsed whole.
 */
export function readDocuments(file: string, text: string, known: (digest: string) => boolean = () => false): DocumentRead[] {
  const docs = documentsOf(text);
  if (docs === undefined) return [wholeFile(file, text)];
  const out: DocumentRead[] = [];
  for (const [i, { text: chunk, start }] of docs.entries()) {
    const digest = digestOf(chunk);
    if (known(digest)) {
      out.push({ digest, known: true, objects: [], errors: [] });
      continue;
    }
    const parsed = parseOne(chunk);
    if (parsed === SEVERAL) return [wholeFile(file, text)];
    const doc: DocumentRead = { digest, known: false, objects: [], errors: [] };
    if (parsed instanceof YAMLException) {
      doc.errors.push(new ManifestError(file, undefined, undefined, `document ${i + 1}: ${yamlProblem(parsed, linesBefore(text, start))}`));
    } else if (parsed !== null && parsed !== undefined) {
      addObject(file, parsed, `document ${i + 1}`, doc, digest);
    }
    out.push(doc);
  }
  return out;
}

/**
 * YAML 1.2's core schema (null, booleans, integers, floats; everything
 * else a string), what the `yaml` package reads by default and what
 * Kubernetes' JSON-shaped objects need: no timestamps turned into Dates,
 * no merge keys.
 */
const YAML_OPTIONS = { schema: CORE_SCHEMA };

const SEVERAL = Symbol('several documents');

/** The value of one document's text, its YAML error, or SEVERAL when it turns out to hold several documents. */
function parseOne(chunk: string): unknown {
  const json = parseJson(chunk);
  if (json !== NOT_JSON) return json;
  const values: unknown[] = [];
  try {
    loadAll(chunk, (v) => values.push(v), YAML_OPTIONS);
  } catch (e) {
    if (e instanceof YAMLException) return e;
    throw e;
  }
  if (values.length > 1) return SEVERAL;
  return ownStrings(values[0]);
}

/** The whole text through one parse: files with directives, or with a document that is several. */
function wholeFile(file: string, text: string): DocumentRead {
  const out: DocumentRead = { known: false, objects: [], errors: [] };
  const json = parseJson(text);
  if (json !== NOT_JSON) {
    if (json !== null) addObject(file, json, 'document 1', out, digestOf(text));
    return out;
  }
  const values: unknown[] = [];
  try {
    loadAll(text, (v) => values.push(v), YAML_OPTIONS);
  } catch (e) {
    if (!(e instanceof YAMLException)) throw e;
    // js-yaml reads every document before handing any over: nothing of this file is read.
    out.errors.push(new ManifestError(file, undefined, undefined, `${yamlProblem(e, 0)} (this file is read in one parse, for its directives or its documents not split by ---: none of its documents is read)`));
    return out;
  }
  for (const [i, v] of values.entries()) {
    const value = ownStrings(v);
    if (value === null || value === undefined) continue;
    addObject(file, value, `document ${i + 1}`, out, digestOf(JSON.stringify(value)));
  }
  return out;
}

/** "bad indentation of a mapping entry at line 7, column 3", lines counted in the file (`firstLine`: the document's first line, from 0). */
function yamlProblem(e: YAMLException, firstLine: number): string {
  const where = e.mark ? ` at line ${firstLine + e.mark.line + 1}, column ${e.mark.column + 1}` : '';
  return `${e.reason || e.message}${where}`;
}

/** How many lines of `text` end before `offset` (counted only for an error's message). */
function linesBefore(text: string, offset: number): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * The texts of a file's YAML documents, split where YAML itself splits
 * them: at a `---` line (a marker YAML forbids as content anywhere, so it
 * always starts a document). Text before the first marker that holds
 * nothing but comments and blank lines is no document. Undefined when the
 * file has directives (a `%` line), which belong to the document after
 * them: such files are parsed whole.
 */
export function splitDocuments(text: string): string[] | undefined {
  return documentsOf(text)?.map((d) => d.text);
}

/** splitDocuments, with where each document's text starts in the file. */
function documentsOf(text: string): Array<{ text: string; start: number }> | undefined {
  if (/^%/m.test(text)) return undefined;
  const docs: Array<{ text: string; start: number }> = [];
  let from = 0;
  // The marker, and its line break when nothing follows it on its line (so a document's text is
  // the same whether it is first in its file or not); what does follow (`--- |`, `--- !tag`) is
  // the document's.
  const marker = /^---(?:[ \t]*\r?\n|(?=[ \t])|$)/gm;
  for (let m = marker.exec(text); m !== null; m = marker.exec(text)) {
    docs.push({ text: text.slice(from, m.index), start: from });
    from = m.index + m[0].length;
  }
  docs.push({ text: text.slice(from), start: from });
  if (docs.length > 1 && docs[0].text.split('\n').every((line) => /^\s*(#.*)?$/.test(line))) docs.shift();
  return docs;
}

const NOT_JSON = Symbol('not JSON');

/**
 * JSON.parse of a text that looks like one JSON object or list, or
 * NOT_JSON (then the YAML parser reads it: YAML documents, JSON with YAML
 * comments, several documents, or broken JSON, whose message should be the
 * YAML parser's as always).
 */
function parseJson(text: string): unknown {
  const first = text.search(/\S/);
  if (first < 0 || (text[first] !== '{' && text[first] !== '[')) return NOT_JSON;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

/**
 * The YAML parser's strings are slices of the file's text, and V8 keeps a
 * whole text alive for as long as any slice of it lives: the addresses and
 * names the proxy keeps from a folder of manifests would hold every file's
 * text (13 MB for 10,000 Services). A JSON round trip gives each string its
 * own storage (JSON.parse copies), at a small fraction of the YAML parse's
 * cost. Kubernetes objects are JSON, so nothing valid changes; a value JSON
 * cannot hold (YAML's .inf, .nan) becomes null, which validation refuses
 * as it refused the number.
 */
function ownStrings(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
}

function digestOf(source: string): string {
  return createHash('sha1').update(source).digest('base64');
}

/** The manifest files of a path: itself when it is a file, else every *.yaml, *.yml and *.json below it, in natural name order (10-x.yaml after 9-x.yaml). */
export function manifestFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => naturalCompare(a.name, b.name))
    .flatMap((e) => {
      const full = join(path, e.name);
      if (e.isDirectory()) return manifestFiles(full);
      return /\.(ya?ml|json)$/.test(e.name) ? [full] : [];
    });
}

/** `digest`: the source's, or for the items of a List each item's own (computed here). */
function addObject(file: string, value: unknown, where: string, out: FileRead, digest: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    out.errors.push(new ManifestError(file, where, undefined, `expected a Kubernetes object, got ${JSON.stringify(value)}`));
    return;
  }
  const o = value as Record<string, unknown>;
  const label = objectLabel(o, where);
  try {
    switch (o.kind) {
      case 'List':
        if (!Array.isArray(o.items)) throw new FieldError('items', 'must be a list');
        o.items.forEach((item, i) => addObject(file, item, `${label} items[${i}]`, out, digestOf(JSON.stringify(item) ?? 'undefined')));
        return;
      case 'Service':
        out.objects.push({ kind: 'Service', file, digest, object: validateService(o) });
        return;
      case 'EndpointSlice':
        out.objects.push({ kind: 'EndpointSlice', file, digest, object: validateEndpointSlice(o) });
        return;
      case 'Node':
        out.objects.push({ kind: 'Node', file, digest, object: validateNode(o) });
        return;
      default:
        if (typeof o.kind !== 'string') throw new FieldError('kind', `must be a string, got ${JSON.stringify(o.kind)}`);
    }
  } catch (e) {
    if (!(e instanceof FieldError)) throw e;
    out.errors.push(new ManifestError(file, label, e.field, e.message, identityOf(o)));
  }
}

/** The kind/namespace/name of an object, when they are there and well-formed. */
export function identityOf(o: Record<string, unknown>): ObjectIdentity | undefined {
  if (o.kind !== 'Service' && o.kind !== 'EndpointSlice' && o.kind !== 'Node') return undefined;
  const meta = o.metadata as Record<string, unknown> | undefined;
  if (typeof meta !== 'object' || meta === null || typeof meta.name !== 'string' || meta.name === '') return undefined;
  if (o.kind === 'Node') return { kind: 'Node', name: meta.name };
  if (meta.namespace !== undefined && typeof meta.namespace !== 'string') return undefined;
  return { kind: o.kind, namespace: (meta.namespace as string | undefined) || 'default', name: meta.name };
}

/** "Service default/web", or the document position when the object has no usable name. */
function objectLabel(o: Record<string, unknown>, where: string): string {
  const meta = o.metadata as Record<string, unknown> | undefined;
  const name = typeof meta?.name === 'string' ? meta.name : undefined;
  const kind = typeof o.kind === 'string' ? o.kind : 'object';
  if (name === undefined) return `${kind} (${where})`;
  if (o.kind === 'Node' || o.kind === 'List') return `${kind} ${name}`;
  const ns = typeof meta?.namespace === 'string' ? meta.namespace : 'default';
  return `${kind} ${ns}/${name}`;
}
