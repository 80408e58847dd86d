/**
 * Services, EndpointSlices and Nodes from a YAML file or folder, watched.
 * A change (inotify, with a poll of the files' mtimes as the safety net:
 * inotify misses edits made from outside a UML guest or through some bind
 * mounts) is debounced, then only the files whose size, mtime or inode
 * changed are read again, only those whose content changed are parsed
 * again, and their objects are compared with what was delivered by
 * digest (of each object's YAML document or JSON): one edited file in a
 * folder of a hundred costs that file, and only the objects that changed
 * are emitted. Nothing is kept of an object but its identity and digest.
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
import { type FSWatcher, readdirSync, readFileSync, statSync, watch } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { ManifestError, type ManifestObject, manifestFiles, type ObjectIdentity, parseManifestText, readDocuments } from '../../kubernetes/manifests.js';
import { logRejected } from './object-gate.js';
import { type DeliveredIdentity, deletedObject, identityOfObject, type RejectedObject, type Source, type SourceEvent, type SourceHandlers } from './source.js';

export interface ManifestsSourceOptions {
  path: string;
  logger: Logger;
  /** Quiet time after the last change before reloading (editors write in several steps). */
  debounceMs?: number;
  /** How often the file mtimes are compared. */
  pollMs?: number;
}

/** What is kept of a delivered object: who it is (for its delete event), where it came from, and its digest. */
interface Delivered extends DeliveredIdentity {
  /** kind/namespace/name */
  key: string;
  file: string;
  digest: string;
}

/** What one file held when it was last parsed. */
interface ParsedFile {
  /** size:mtime:inode when it was read: an unchanged stamp means an unchanged file. */
  stamp: string;
  /** Of the whole text: a file touched but not changed is not parsed again. */
  contentDigest: string;
  objects: Delivered[];
  errors: ManifestError[];
  /** Document digest → its objects, for the documents that read cleanly: an edit re-parses only the documents it changed. */
  documents: Map<string, Delivered[]>;
}

/**
 * Joined, not a template literal: V8 keeps a template's result as a tree of
 * its pieces (four small objects here), and every delivered object holds
 * its key for as long as it exists; join() makes one flat string.
 */
function keyOf(kind: string, namespace: string | undefined, name: string): string {
  return [kind, kind === 'Node' ? '' : namespace || 'default', name].join('/');
}

function identityKey(id: ObjectIdentity): string {
  return keyOf(id.kind, id.namespace, id.name);
}

export class ManifestsSource implements Source {
  readonly description: string;
  private readonly debounceMs: number;
  private readonly pollMs: number;
  /** key → what was delivered (the last good version of each object). */
  private current = new Map<string, Delivered>();
  /** file → what it held when last parsed. */
  private files = new Map<string, ParsedFile>();
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
    if (this.stopped) return;
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
    let n: { changes: number; parsed: number };
    try {
      n = this.load();
    } catch (err) {
      // The path itself is gone or unreadable: keep everything as it is until it comes back.
      this.options.logger.error({ path: this.options.path, err: (err as Error).message }, 'manifests could not be read; keeping the last good state until they are back');
      return;
    }
    this.options.logger.info({ path: this.options.path, changes: n.changes, filesParsed: n.parsed }, 'manifests reloaded');
  }

  /**
   * Parses the files that changed, decides per object, emits the
   * differences; returns how many, and how many files were parsed. Throws
   * only when the path cannot be listed.
   */
  private load(): { changes: number; parsed: number } {
    const files = manifestFiles(this.options.path);
    /** Objects parsed in this load, by key: what add and update events carry. */
    const fresh = new Map<string, ManifestObject>();
    /** Errors of the files parsed (or unreadable) now: the ones to report. */
    const reported: ManifestError[] = [];
    const unreadableFiles = new Set<string>();
    const next = new Map<string, Delivered>();
    const errors: ManifestError[] = [];
    const seen = new Map<string, ParsedFile>();
    let parsed = 0;
    for (const file of files) {
      const read = this.readFile(file, fresh);
      if (read.parsed) parsed++;
      if (!read.file) {
        // Could not be read at all this time: what it held is unknown, so it is kept.
        unreadableFiles.add(file);
        reported.push(read.error!);
        errors.push(read.error!);
        continue;
      }
      seen.set(file, read.file);
      if (read.parsed) reported.push(...read.file.errors);
      errors.push(...read.file.errors);
      // A later file's version of the same object wins, as a full read in name order would have it.
      for (const d of read.file.objects) next.set(d.key, d);
    }
    this.files = seen;
    const report = new Set(reported);
    for (const err of errors) {
      if (!err.identity) {
        unreadableFiles.add(err.file);
        if (!report.has(err)) continue;
        let held = false;
        for (const d of this.current.values()) if (d.file === err.file) held = true;
        this.reject(err, held ? 'kept-last-good' : 'skipped');
        continue;
      }
      const key = identityKey(err.identity);
      const last = this.current.get(key);
      // A good object of the same name elsewhere wins; otherwise the last good version stays.
      if (last && !next.has(key)) next.set(key, last);
      if (report.has(err)) this.reject(err, last && next.get(key) === last ? 'kept-last-good' : 'skipped');
    }
    // What a file we could not read fully held is unknown: nothing from it is deleted.
    for (const [key, last] of this.current) {
      if (unreadableFiles.has(last.file) && !next.has(key)) next.set(key, last);
    }
    return { changes: this.emitDifferences(next, fresh), parsed };
  }

  /**
   * One file: its last parse when its stamp (or, read again, its content)
   * is unchanged, else a new parse whose objects go into `fresh`.
   */
  private readFile(file: string, fresh: Map<string, ManifestObject>): { file?: ParsedFile; parsed: boolean; error?: ManifestError } {
    const last = this.files.get(file);
    let stamp: string;
    let text: string;
    try {
      const st = statSync(file);
      stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
      if (last?.stamp === stamp) return { file: last, parsed: false };
      text = readFileSync(file, 'utf8');
    } catch (e) {
      // Removed or replaced between the listing and the read (an editor saving): unreadable this time.
      return { parsed: false, error: new ManifestError(file, undefined, undefined, `cannot read: ${(e as Error).message}`) };
    }
    const contentDigest = createHash('sha1').update(text).digest('base64');
    if (last?.contentDigest === contentDigest) return { file: { ...last, stamp }, parsed: false };
    const parsed: ParsedFile = { stamp, contentDigest, objects: [], errors: [], documents: new Map() };
    for (const doc of readDocuments(file, text, (digest) => last?.documents.has(digest) ?? false)) {
      const objects = doc.known ? last!.documents.get(doc.digest!)! : doc.objects.map((o) => {
        const d = delivered(o);
        fresh.set(d.key, o);
        return d;
      });
      parsed.objects.push(...objects);
      parsed.errors.push(...doc.errors);
      if (doc.digest !== undefined && doc.errors.length === 0) parsed.documents.set(doc.digest, objects);
    }
    return { file: parsed, parsed: true };
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
  private emitDifferences(next: Map<string, Delivered>, fresh: Map<string, ManifestObject>): number {
    const events: SourceEvent[] = [];
    for (const [key, old] of this.current) {
      if (!next.has(key)) events.push({ kind: old.kind, type: 'delete', object: deletedObject(old) } as SourceEvent);
    }
    for (const [key, item] of next) {
      const old = this.current.get(key);
      if (old && old.digest === item.digest) continue;
      events.push({ kind: item.kind, type: old ? 'update' : 'add', object: this.objectOf(key, item, fresh) } as SourceEvent);
    }
    this.current = next;
    for (const e of events) this.handlers?.event(e);
    return events.length;
  }

  /**
   * The object to deliver: parsed now, unless a file that did not change
   * holds the winning version (a duplicate in another file was removed):
   * then that file is parsed again for it.
   */
  private objectOf(key: string, item: Delivered, fresh: Map<string, ManifestObject>): SourceEvent['object'] {
    const o = fresh.get(key);
    if (o && o.file === item.file && o.digest === item.digest) return o.object;
    const text = readFileSync(item.file, 'utf8');
    const again = parseManifestText(item.file, text).objects.find((x) => keyOf(x.kind, x.object.metadata.namespace, x.object.metadata.name) === key);
    if (!again) throw new Error(`${item.file} changed while it was being read; the next reload applies it`);
    return again.object;
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
  const id = identityOfObject(o.kind, o.object as SourceEvent['object']);
  return { key: keyOf(id.kind, id.namespace, id.name), file: o.file, digest: o.digest, ...id };
}
