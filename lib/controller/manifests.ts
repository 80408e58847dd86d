/**
 * Reads Services, EndpointSlices and Nodes from YAML: one file or a folder
 * (*.yaml, *.yml, *.json, in name order), multi-document files and
 * `kind: List`. Other kinds (Deployments...) are skipped. A bad object
 * fails the whole load with an error naming the file, the object and the
 * field.
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

export class ManifestError extends Error {
  constructor(
    readonly file: string,
    readonly object: string | undefined,
    readonly field: string | undefined,
    message: string,
  ) {
    super(`${file}: ${object ? `${object}: ` : ''}${message}`);
    this.name = 'ManifestError';
  }
}

export function loadManifests(path: string): Manifests {
  const out: Manifests = { services: [], endpointSlices: [], nodes: [] };
  for (const file of manifestFiles(path)) loadFile(file, out);
  return out;
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

function loadFile(file: string, out: Manifests): void {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  for (const [i, doc] of (Array.isArray(docs) ? docs : [docs]).entries()) {
    const error = doc.errors[0];
    if (error) throw new ManifestError(file, undefined, undefined, `document ${i + 1}: ${error.message}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    addObject(file, value, `document ${i + 1}`, out);
  }
}

function addObject(file: string, value: unknown, where: string, out: Manifests): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ManifestError(file, where, undefined, `expected a Kubernetes object, got ${JSON.stringify(value)}`);
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
        out.services.push(validateService(o));
        return;
      case 'EndpointSlice':
        out.endpointSlices.push(validateEndpointSlice(o));
        return;
      case 'Node':
        out.nodes.push(validateNode(o));
        return;
      default:
        if (typeof o.kind !== 'string') throw new FieldError('kind', `must be a string, got ${JSON.stringify(o.kind)}`);
    }
  } catch (e) {
    if (e instanceof FieldError) throw new ManifestError(file, label, e.field, e.message);
    throw e;
  }
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
