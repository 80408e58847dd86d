/**
 * An addon's event reader as an async iterator: the reader runs on a
 * thread of its own and wakes this side once whenever its queue stops
 * being empty (until this side takes it); a subclass turns what it takes
 * into events. The families' streams (conntrack events, nf_tables' ruleset
 * changes) differ only in that.
 */

import type { OpenOptions } from './client.js';
import { fromNativeFailure } from './errors.js';

/** The addon's side of a stream: what this class needs of it. */
export interface NativeEventReader {
  open(): Promise<void>;
  close(): void;
}

export abstract class EventStream<E> implements AsyncIterableIterator<E> {
  /** Events ready for next(). */
  protected queue: E[] = [];
  private error: Error | undefined;
  private closed = false;
  /** The next() call waiting for a wake. */
  private waiting: Array<() => void> = [];
  /** The addon woke this side since it last took the queue. */
  private signalled = false;
  /** The last next() call: each waits for the one before, so calls settle in the order made, with events in the kernel's order. */
  private last: Promise<unknown> = Promise.resolve();

  protected constructor(private readonly reader: NativeEventReader) {}

  /**
   * Takes what the addon has queued into `queue` (in order); returns the
   * reader's error, if it failed, after the events read before it.
   */
  protected abstract take(): Error | undefined | Promise<Error | undefined>;

  /** @internal Called by the addon when events are queued. */
  readable(): void {
    this.signalled = true;
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
  }

  /** The next event; waits (without blocking the event loop) until one comes or the stream is closed. */
  next(): Promise<IteratorResult<E>> {
    const p = this.last.then(() => this.nextInOrder());
    this.last = p.catch(() => undefined);
    return p;
  }

  private async nextInOrder(): Promise<IteratorResult<E>> {
    for (;;) {
      // Closed first: a subclass's take() may wait, and let close() in meanwhile.
      if (this.closed) return { value: undefined, done: true };
      if (this.queue.length) return { value: this.queue.shift()!, done: false };
      this.signalled = false;
      const error = await this.take();
      if (error && !this.error) this.error = error;
      if (this.queue.length || this.closed) continue;
      if (this.error) {
        const e = this.error;
        this.close();
        throw e;
      }
      // The addon wakes once until its queue is taken: a wake that came
      // while this side was taking set a flag rather than a waiter.
      if (!this.signalled) await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  /** Stops reading and closes the socket; a pending next() ends the iteration. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.reader.close();
    this.readable();
  }

  /** Leaving a for-await loop: closes the stream. */
  async return(): Promise<IteratorResult<E>> {
    this.close();
    return { value: undefined, done: true };
  }

  /** The stream is its own iterator. */
  [Symbol.asyncIterator](): this {
    return this;
  }
}

/**
 * Opens an addon reader in the namespace of `open` (a handle's options)
 * and the stream over it: `make` builds both, given what the reader's
 * wakes are to call and the options the reader takes from the handle's. A
 * reader that cannot start closes the stream, and the error names
 * `operation` and the namespace.
 */
export async function openStream<S extends EventStream<unknown>>(
  operation: string,
  open: OpenOptions,
  make: (readable: () => void, socket: { netns?: string; testRcvbuf?: number }) => { reader: NativeEventReader; stream: S },
): Promise<S> {
  let stream: S | undefined;
  // testRcvbuf: the tests' way to make the kernel drop announcements.
  const socket = { netns: open.netns, testRcvbuf: (open as { testRcvbuf?: number }).testRcvbuf };
  const made = make(() => stream?.readable(), socket);
  stream = made.stream;
  try {
    await made.reader.open();
  } catch (err) {
    stream.close();
    throw fromNativeFailure(err, operation, open.netns);
  }
  return stream;
}
