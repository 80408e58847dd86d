/**
 * Conntrack events as an async iterator. The addon reads the multicast
 * socket on a thread of its own and wakes this side when events are
 * queued; each wake takes them all at once. Dropped events are never a
 * silent gap: the stream yields `{ type: 'overrun' }` where they went
 * missing.
 */
import { fromNativeFailure } from '../netlink/errors.js';
import { EventStream, openStream } from '../netlink/event-stream.js';
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
export class ConntrackEventStream extends EventStream<ConntrackEvent> {
  /** @internal */
  constructor(private readonly native: NativeConntrackEvents) {
    super(native);
  }

  protected take(): Error | undefined {
    const r = this.native.take();
    const records = new EntryRecords(r);
    for (let i = 0; i < records.count; i++) {
      const kind = records.kind(i);
      if (kind === CT.kOverrunRecord) this.queue.push({ type: 'overrun' });
      else this.queue.push({ type: EVENT_TYPE[kind] ?? 'update', entry: records.entry(i) });
    }
    return r.error ? fromNativeFailure(r.error, 'conntrack events') : undefined;
  }
}

/** Opens a stream in the namespace of `open` (a handle's options). */
export async function openEventStream(open: OpenOptions, options: EventOptions): Promise<ConntrackEventStream> {
  const o = check.object(options, 'options');
  check.knownFields(o, OPTIONS, 'options');
  const groups = validate.eventGroups(o.types, 'options.types');
  const filter = validate.filter(o.filter, 'options.filter');
  const maxQueued = check.optionalInteger(o.maxQueued, 'options.maxQueued', 1, 1 << 24, 16384);
  return openStream('Conntrack.events', open, (readable, socket) => {
    const reader = new ConntrackEvents({ ...socket, groups, filter, maxQueued }, readable);
    return { reader, stream: new ConntrackEventStream(reader) };
  });
}
