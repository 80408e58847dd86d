/**
 * Conntrack events as an async iterator. The addon reads the multicast
 * socket on a thread of its own and wakes this side when events are
 * queued; each wake takes them all at once. Dropped events are never a
 * silent gap: the stream yields `{ type: 'overrun' }` where they went
 * missing.
 */
import { fromNativeFailure } from '../netlink/errors.js';
import type { OpenOptions } from '../netlink/client.js';
import * as check from '../util/check.js';
import { CT } from './constants.js';
import { ConntrackEvents, type NativeConntrackEvents } from './native.js';
import { EntryRecords } from './records.js';
import type { ConntrackEvent, ConntrackEventType, EventOptions } from './types.js';
import * as validate from './validate.js';

const EVENT_TYPE: Record<number, ConntrackEventType> = { 1: 'new', 2: 'update', 3: 'destroy' };
const OPTIONS = new Set(['types', 'filter', 'maxQueued']);

/** Conntrack events, in the order the kernel sent them; see Conntrack.events(). */
export class ConntrackEventStream implements AsyncIterableIterator<ConntrackEvent> {
  private queue: ConntrackEvent[] = [];
  private error: Error | undefined;
  private closed = false;
  private waiting: (() => void) | undefined;

  /** @internal */
  constructor(private readonly native: NativeConntrackEvents) {}

  /** @internal Called by the addon when events are queued. */
  readable(): void {
    const wake = this.waiting;
    this.waiting = undefined;
    wake?.();
  }

  private take(): void {
    const r = this.native.take();
    const records = new EntryRecords(r);
    for (let i = 0; i < records.count; i++) {
      const kind = records.kind(i);
      if (kind === CT.kOverrunRecord) this.queue.push({ type: 'overrun' });
      else this.queue.push({ type: EVENT_TYPE[kind] ?? 'update', entry: records.entry(i) });
    }
    if (r.error && !this.error) this.error = fromNativeFailure(r.error, 'conntrack events');
  }

  /** The next event; waits (without blocking the event loop) until one comes or the stream is closed. */
  async next(): Promise<IteratorResult<ConntrackEvent>> {
    for (;;) {
      if (this.queue.length) return { value: this.queue.shift()!, done: false };
      if (this.closed) return { value: undefined, done: true };
      this.take();
      if (this.queue.length) continue;
      if (this.error) {
        const e = this.error;
        this.close();
        throw e;
      }
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  /** Stops reading and closes the socket; a pending next() ends the iteration. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.native.close();
    this.readable();
  }

  /** Leaving a for-await loop: closes the stream. */
  async return(): Promise<IteratorResult<ConntrackEvent>> {
    this.close();
    return { value: undefined, done: true };
  }

  /** The stream is its own iterator. */
  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** Opens a stream in the namespace of `open` (a handle's options). */
export async function openEventStream(open: OpenOptions, options: EventOptions): Promise<ConntrackEventStream> {
  const o = check.object(options, 'options');
  check.knownFields(o, OPTIONS, 'options');
  const groups = validate.eventGroups(o.types, 'options.types');
  const filter = validate.filter(o.filter, 'options.filter');
  const maxQueued = check.optionalInteger(o.maxQueued, 'options.maxQueued', 1, 1 << 24, 16384);
  let stream: ConntrackEventStream | undefined;
  const test = open as OpenOptions & { testRcvbuf?: number };
  const handle = new ConntrackEvents(
    { netns: open.netns, testRcvbuf: test.testRcvbuf, groups, filter, maxQueued },
    () => stream?.readable(),
  );
  stream = new ConntrackEventStream(handle);
  try {
    await handle.open();
  } catch (err) {
    stream.close();
    throw fromNativeFailure(err, 'Conntrack.events', open.netns);
  }
  return stream;
}
