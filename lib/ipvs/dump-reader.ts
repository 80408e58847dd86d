/**
 * dump()'s records turned into services with their destinations as they
 * arrive: the addon hands finished records over in chunks while the kernel
 * is still answering (native/ipvs/dump_job.cc), and the rest with the
 * result. Request 0 is the service dump, request i + 1 the destinations of
 * service i; strings are numbered across the whole dump, each chunk
 * bringing those it introduces.
 */
import { keepLayout } from '../util/keep-layout.js';
import { errorOf } from './errors.js';
import { type NativeReplies, ReplyRecords } from './reply-reader.js';
import type { ServiceWithDestinations } from './types.js';

export class DumpReader {
  private readonly services: ServiceWithDestinations[] = [];
  private readonly strings: string[] = [];
  /** A chunk that could not be read: thrown when the dump ends (never into the addon). */
  private failed: { error: unknown } | undefined;

  constructor(private readonly withStats: boolean) {}

  /** One chunk of records and the strings it introduces; called by the addon on the JavaScript thread. */
  readonly add = (records: ArrayBuffer, strings: string[]): void => {
    try {
      this.read(records, strings);
    } catch (error) {
      this.failed ??= { error };
    }
  };

  /** The end of the dump: its failures, and the records that came with it. */
  finish(r: NativeReplies): ServiceWithDestinations[] {
    const gone = new Set<number>();
    for (const f of r.failures) {
      if (f.index === 0) throw errorOf(f, 'dump');
      // A service deleted between the two steps is left out.
      if (f.code === 'ESRCH' || f.code === 'ENOENT') gone.add(f.index - 1);
      else throw errorOf(f, 'dump');
    }
    this.read(r.records, r.strings);
    if (this.failed) throw this.failed.error;
    return gone.size === 0 ? this.services : this.services.filter((_, i) => !gone.has(i));
  }

  private read(records: ArrayBuffer, strings: string[]): void {
    for (let i = 0; i < strings.length; i++) this.strings.push(strings[i]);
    const rec = new ReplyRecords(records, this.strings);
    const services = this.services;
    const withStats = this.withStats;
    for (let i = 0; i < rec.count; i++) {
      const req = rec.request(i);
      if (req === 0) {
        const s = rec.service(i, withStats) as ServiceWithDestinations;
        s.destinations = [];
        services.push(s);
      } else {
        services[req - 1].destinations.push(rec.destination(i, withStats));
      }
    }
  }
}

// Each dump's reader is dropped when the dump ends (util/keep-layout.ts says why one is kept).
keepLayout(new DumpReader(true));
