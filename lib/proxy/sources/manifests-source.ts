/**
 * Services, EndpointSlices and Nodes from a YAML file or folder, watched.
 * A change (inotify, with a poll of the files' mtimes as the safety net:
 * inotify misses edits made from outside a UML guest or through some bind
 * mounts) is debounced, the whole set is reloaded and diffed against the
 * last good load, and only the objects that changed are emitted. A load
 * that fails (a half-written file, a typo) is logged and ignored: the last
 * good state stays programmed rather than being torn down.
 */
import { type FSWatcher, readdirSync, statSync, watch } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { loadManifests, type Manifests } from '../../controller/manifests.js';
import type { Source, SourceEvent, SourceHandlers } from './source.js';

export interface ManifestsSourceOptions {
  path: string;
  logger: Logger;
  /** Quiet time after the last change before reloading (editors write in several steps). */
  debounceMs?: number;
  /** How often the file mtimes are compared. */
  pollMs?: number;
}

type Kind = SourceEvent['kind'];

export class ManifestsSource implements Source {
  readonly description: string;
  private readonly debounceMs: number;
  private readonly pollMs: number;
  private current = new Map<string, { kind: Kind; json: string; object: SourceEvent['object'] }>();
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
    // The first load must work: starting with nothing would program nothing, silently.
    this.signature = this.fileSignature();
    this.apply(loadManifests(this.options.path));
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
    let manifests: Manifests;
    try {
      manifests = loadManifests(this.options.path);
    } catch (err) {
      this.options.logger.error({ err: (err as Error).message }, 'manifests could not be loaded; keeping the last good state until they are fixed');
      return;
    }
    const n = this.apply(manifests);
    this.options.logger.info({ path: this.options.path, changes: n }, 'manifests reloaded');
  }

  /** Diffs against the last good load and emits the differences; returns how many. */
  private apply(m: Manifests): number {
    const next = new Map<string, { kind: Kind; json: string; object: SourceEvent['object'] }>();
    const put = (kind: Kind, object: SourceEvent['object']) => {
      const key = `${kind}/${kind === 'Node' ? '' : (object.metadata.namespace ?? 'default')}/${object.metadata.name}`;
      next.set(key, { kind, json: JSON.stringify(object), object });
    };
    m.nodes.forEach((o) => put('Node', o));
    m.endpointSlices.forEach((o) => put('EndpointSlice', o));
    m.services.forEach((o) => put('Service', o));
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
