/**
 * Services, EndpointSlices and Nodes from a YAML file or folder, watched.
 * A change (inotify, with a poll of the files' mtimes as the safety net:
 * inotify misses edits made from outside a UML guest or through some bind
 * mounts) is debounced, the whole set is read again and diffed against what
 * was delivered, and only the objects that changed are emitted.
 *
 * Bad input is handled per object, never per load:
 *  - an object that fails validation but says who it is (kind, namespace,
 *    name) is refused: a new one is skipped, a bad edit of one delivered
 *    before keeps the last good version in force (a typo must not take a
 *    working Service down; the next good edit applies);
 *  - a document that cannot be parsed (a half-written file, broken YAML) or
 *    an object without a usable name hides which objects its file holds,
 *    so nothing is taken to be deleted from that file: its objects keep
 *    their last good versions until it reads cleanly again.
 * Each is logged as a structured warning (file, object, field) and
 * reported to the handlers (a metric). At start there is no last good
 * version: a bad object is skipped and the others are programmed.
 */
import { type FSWatcher, readdirSync, statSync, watch } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { type ManifestError, type ManifestObject, type ObjectIdentity, readManifests } from '../../controller/manifests.js';
import { logRejected } from './object-gate.js';
import type { RejectedObject, Source, SourceEvent, SourceHandlers } from './source.js';

export interface ManifestsSourceOptions {
  path: string;
  logger: Logger;
  /** Quiet time after the last change before reloading (editors write in several steps). */
  debounceMs?: number;
  /** How often the file mtimes are compared. */
  pollMs?: number;
}

interface Delivered {
  kind: SourceEvent['kind'];
  file: string;
  json: string;
  object: SourceEvent['object'];
}

function keyOf(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${kind === 'Node' ? '' : namespace || 'default'}/${name}`;
}

function identityKey(id: ObjectIdentity): string {
  return keyOf(id.kind, id.namespace, id.name);
}

export class ManifestsSource implements Source {
  readonly description: string;
  private readonly debounceMs: number;
  private readonly pollMs: number;
  private current = new Map<string, Delivered>();
  private signature = '';
  private handlers?: SourceHandlers;
  private watcher?: FSWatcher;
  private pollTimer?: NodeJS.Timeout;
  private debounceTimer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly options: ManifestsSourceOptions) {
    this.description = `manifests ${options.path}`;
    this.debounceMs = options.debounceMs ?? 250;
    this.pollMs = options.pollMs ?? 1000;
  }

  async start(handlers: SourceHandlers): Promise<void> {
    this.handlers = handlers;
    this.signature = this.fileSignature();
    // Only a path that cannot be read at all fails start-up; bad objects are skipped and reported.
    this.load();
    handlers.synced();
    this.watchFiles();
    this.pollTimer = setInterval(() => {
      if (this.fileSignature() !== this.signature) this.changed();
    }, this.pollMs);
    this.pollTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watcher?.close();
    clearInterval(this.pollTimer);
    clearTimeout(this.debounceTimer);
  }

  private watchFiles(): void {
    const path = this.options.path;
    try {
      const isDir = statSync(path).isDirectory();
      // A single file is watched through its folder: editors replace files by rename.
      this.watcher = watch(isDir ? path : dirname(path), { recursive: isDir, persistent: false }, () => this.changed());
      this.watcher.on('error', (err) => this.options.logger.warn({ err }, 'manifest watch failed; relying on polling'));
    } catch (err) {
      this.options.logger.warn({ err }, 'cannot watch the manifests; relying on polling');
    }
  }

  private changed(): void {
    if (this.stopped) return;
    clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => this.reload(), this.debounceMs);
  }

  private reload(): void {
    if (this.stopped) return;
    const signature = this.fileSignature();
    if (signature === this.signature) return;
    this.signature = signature;
    let n: number;
    try {
      n = this.load();
    } catch (err) {
      // The path itself is gone or unreadable: keep everything as it is until it comes back.
      this.options.logger.error({ path: this.options.path, err: (err as Error).message }, 'manifests could not be read; keeping the last good state until they are back');
      return;
    }
    this.options.logger.info({ path: this.options.path, changes: n }, 'manifests reloaded');
  }

  /** Reads the manifests, decides per object, emits the differences; returns how many. Throws only when the path cannot be listed. */
  private load(): number {
    const read = readManifests(this.options.path);
    const next = new Map<string, Delivered>();
    for (const o of read.objects) next.set(keyOf(o.kind, o.object.metadata.namespace, o.object.metadata.name), delivered(o));
    const unreadableFiles = new Set<string>();
    for (const err of read.errors) {
      if (!err.identity) {
        unreadableFiles.add(err.file);
        const held = [...this.current.values()].some((d) => d.file === err.file);
        this.reject(err, held ? 'kept-last-good' : 'skipped');
        continue;
      }
      const key = identityKey(err.identity);
      const last = this.current.get(key);
      // A good object of the same name elsewhere wins; otherwise the last good version stays.
      if (last && !next.has(key)) next.set(key, last);
      this.reject(err, last && next.get(key) === last ? 'kept-last-good' : 'skipped');
    }
    // What a file we could not read fully held is unknown: nothing from it is deleted.
    for (const [key, last] of this.current) {
      if (unreadableFiles.has(last.file) && !next.has(key)) next.set(key, last);
    }
    return this.emitDifferences(next);
  }

  private reject(err: ManifestError, action: RejectedObject['action']): void {
    const r: RejectedObject = {
      kind: err.identity?.kind ?? err.object?.split(' ')[0] ?? 'document',
      object: err.object ?? '(unparsable document)',
      field: err.field,
      problem: err.problem,
      action,
    };
    logRejected(this.options.logger, r, { file: err.file });
    this.handlers?.rejected?.(r);
  }

  /** Diffs against what was delivered and emits the differences; returns how many. */
  private emitDifferences(next: Map<string, Delivered>): number {
    const events: SourceEvent[] = [];
    for (const [key, old] of this.current) {
      if (!next.has(key)) events.push({ kind: old.kind, type: 'delete', object: old.object } as SourceEvent);
    }
    for (const [key, item] of next) {
      const old = this.current.get(key);
      if (!old) events.push({ kind: item.kind, type: 'add', object: item.object } as SourceEvent);
      else if (old.json !== item.json) events.push({ kind: item.kind, type: 'update', object: item.object } as SourceEvent);
    }
    this.current = next;
    for (const e of events) this.handlers?.event(e);
    return events.length;
  }

  /** Names, sizes and mtimes of the manifest files: cheap to compute, changes with any edit. */
  private fileSignature(): string {
    const parts: string[] = [];
    const visit = (p: string) => {
      try {
        const st = statSync(p);
        if (st.isDirectory()) {
          for (const e of readdirSync(p).sort()) visit(join(p, e));
        } else if (p === this.options.path || /\.(ya?ml|json)$/.test(p)) {
          parts.push(`${p}:${st.size}:${st.mtimeMs}`);
        }
      } catch {
        parts.push(`${p}:missing`);
      }
    };
    visit(this.options.path);
    return parts.join('\n');
  }
}

function delivered(o: ManifestObject): Delivered {
  return { kind: o.kind, file: o.file, json: JSON.stringify(o.object), object: o.object };
}
