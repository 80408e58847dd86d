/**
 * Reads Services, EndpointSlices and Nodes from YAML: one file or a folder
 * (*.yaml, *.yml, *.json, in name order), multi-document files and
 * `kind: List`. Other kinds (Deployments...) are skipped.
 *
 * Two ways to read:
 *  - loadManifests() is strict (the `plan` command): the first bad object
 *    throws a ManifestError naming the file, the object and the field.
 *  - readManifests() collects: every good object comes back with the file
 *    it came from, every bad one as a ManifestError, and one bad object
 *    never hides the others (the proxy's manifests source).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { EndpointSlice, Node, Service } from './model.js';
import { FieldError, validateEndpointSlice, validateNode, validateService } from './validate.js';

export interface Manifests {
  services: Service[];
  endpointSlices: EndpointSlice[];
  nodes: Node[];
}

export type ManifestKind = 'Service' | 'EndpointSlice' | 'Node';

export type ManifestObject =
  | { kind: 'Service'; file: string; object: Service }
  | { kind: 'EndpointSlice'; file: string; object: EndpointSlice }
  | { kind: 'Node'; file: string; object: Node };

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

export interface ManifestRead {
  objects: ManifestObject[];
  errors: ManifestError[];
  /** Every manifest file looked at, good or not. */
  files: string[];
}

/** Strict: throws the first bad object or document (`plan`). A missing path throws too. */
export function loadManifests(path: string): Manifests {
  const read = readManifests(path);
  if (read.errors.length > 0) throw read.errors[0];
  return toManifests(read.objects);
}

/**
 * Collecting: bad objects and unreadable documents are returned as errors
 * next to the good objects. Only a path that cannot be listed at all throws.
 */
export function readManifests(path: string): ManifestRead {
  const out: ManifestRead = { objects: [], errors: [], files: manifestFiles(path) };
  for (const file of out.files) readFile(file, out);
  return out;
}

export function toManifests(objects: readonly ManifestObject[]): Manifests {
  const m: Manifests = { services: [], endpointSlices: [], nodes: [] };
  for (const o of objects) {
    if (o.kind === 'Service') m.services.push(o.object);
    else if (o.kind === 'EndpointSlice') m.endpointSlices.push(o.object);
    else m.nodes.push(o.object);
  }
  return m;
}

function manifestFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => {
      const full = join(path, e.name);
      if (e.isDirectory()) return manifestFiles(full);
      return /\.(ya?ml|json)$/.test(e.name) ? [full] : [];
    });
}

function readFile(file: string, out: ManifestRead): void {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    // Removed or replaced between the listing and the read (an editor saving): unreadable this time.
    out.errors.push(new ManifestError(file, undefined, undefined, `cannot read: ${(e as Error).message}`));
    return;
  }
  const docs = parseAllDocuments(text);
  for (const [i, doc] of (Array.isArray(docs) ? docs : [docs]).entries()) {
    const error = doc.errors[0];
    if (error) {
      out.errors.push(new ManifestError(file, undefined, undefined, `document ${i + 1}: ${error.message}`));
      continue;
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    addObject(file, value, `document ${i + 1}`, out);
  }
}

function addObject(file: string, value: unknown, where: string, out: ManifestRead): void {
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
        o.items.forEach((item, i) => addObject(file, item, `${label} items[${i}]`, out));
        return;
      case 'Service':
        out.objects.push({ kind: 'Service', file, object: validateService(o) });
        return;
      case 'EndpointSlice':
        out.objects.push({ kind: 'EndpointSlice', file, object: validateEndpointSlice(o) });
        return;
      case 'Node':
        out.objects.push({ kind: 'Node', file, object: validateNode(o) });
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
