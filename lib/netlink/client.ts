/**
 * What every typed client (Ipvs, Ipset, Rtnl) shares: opening its native
 * handle, running calls one at a time on it, turning failures of the
 * conversation into NetlinkErrors, counters, and closing.
 */
import { constants } from 'node:os';

import { integer, knownFields, object, string, wrongValue } from '../util/check.js';
import { type HandleOptions, type NativeSocketBuffers, type SocketCounters } from './binding.js';
import { NetlinkError, fromNativeFailure } from './errors.js';
import { SerialQueue } from './serial-queue.js';

/** How a client's handle is opened. */
export interface OpenOptions {
  /** A network namespace path, e.g. /run/netns/NAME or /proc/PID/ns/net; the caller's own namespace when left out. */
  netns?: string;
  /** How long a request may wait for the kernel without progress, in milliseconds (default 5000). */
  timeoutMs?: number;
}

/** What every native handle has. */
export interface NativeHandle extends NativeSocketBuffers {
  /** Opens the socket (in the namespace the handle was made for). */
  open(): Promise<unknown>;
  /** Closes the socket without waiting: a call in flight sends nothing more, and what it did not send fails EBADF. */
  close(): void;
  /** System calls and messages so far. */
  counters(): SocketCounters;
}

const OPTIONS: ReadonlySet<string> = new Set(['netns', 'timeoutMs']);
// Tests only, see native/netlink/socket.h; not named in messages.
const ALL_OPTIONS: ReadonlySet<string> = new Set([...OPTIONS, 'testDeafSockets', 'testRcvbuf', 'testIgnoreBudget']);

function checkOpenOptions(options: unknown): HandleOptions {
  const o = object(options, 'options');
  knownFields(o, ALL_OPTIONS, 'options', OPTIONS);
  const out: HandleOptions = {};
  if (o.netns !== undefined) {
    out.netns = string(o.netns, 'options', 'netns');
    if (out.netns === '') throw wrongValue('options.netns', 'a path such as /run/netns/NAME', out.netns);
  }
  if (o.timeoutMs !== undefined) out.timeoutMs = integer(o.timeoutMs, 'options', 1, 86_400_000, 'timeoutMs');
  if (o.testDeafSockets !== undefined) out.testDeafSockets = o.testDeafSockets as number;
  if (o.testRcvbuf !== undefined) out.testRcvbuf = o.testRcvbuf as number;
  if (o.testIgnoreBudget !== undefined) out.testIgnoreBudget = o.testIgnoreBudget as boolean;
  return out;
}

/** Checks the options, creates the native handle and opens its socket. */
export async function openHandle<H extends NativeHandle>(
  make: (options: HandleOptions) => H,
  options: unknown,
  operation: string,
): Promise<H> {
  const opts = checkOpenOptions(options);
  const handle = make(opts);
  try {
    await handle.open();
  } catch (err) {
    handle.close();
    throw fromNativeFailure(err, operation, opts.netns);
  }
  return handle;
}

/** The base of every typed client: one native handle, its calls queued one at a time. */
export abstract class NetlinkClient<H extends NativeHandle> {
  private readonly queue = new SerialQueue();
  private closed = false;
  /** The release of idle memory, waiting for the event loop's next turn (see whenIdle). */
  private idle?: NodeJS.Immediate;

  /**
   * The addon's handle: its socket and codec. Internal, for the family's
   * client class; a caller uses the typed methods.
   * @internal
   */
  protected readonly handle: H;

  protected constructor(
    handle: H,
    private readonly kind: string,
  ) {
    this.handle = handle;
  }

  /**
   * Runs `task` alone on this handle (calls share one socket, and queueing
   * here keeps waiting callers off the libuv pool).
   */
  protected exclusive<R>(operation: string, task: () => Promise<R>): Promise<R> {
    return this.queue.run(async () => {
      if (this.closed) {
        throw new NetlinkError({ errno: constants.errno.EBADF, code: 'EBADF', operation, detail: `the ${this.kind} handle is closed` });
      }
      this.busy();
      try {
        return await task();
      } finally {
        this.whenIdle();
      }
    });
  }

  /**
   * What the handle lets go of once its caller is idle: the memory a big
   * call grew (a dump's receive slots, a resync's send buffer), which a
   * long-running caller would otherwise hold from one periodic full read to
   * the next. A family that keeps more adds its own (and calls this).
   */
  protected releaseIdle(): void {
    this.handle.releaseBuffers();
  }

  /** A call starts: a release not yet made is not wanted (the call may reuse that memory). */
  private busy(): void {
    if (this.idle === undefined) return;
    clearImmediate(this.idle);
    this.idle = undefined;
  }

  /**
   * A call ended: release at the event loop's next turn, unless another
   * call starts first (a loop of dumps keeps its memory paged in).
   */
  private whenIdle(): void {
    this.idle ??= setImmediate(() => {
      this.idle = undefined;
      if (!this.closed) this.releaseIdle();
    });
    this.idle.unref();
  }

  /** Calls the addon: argument errors pass through, failures of the conversation become NetlinkErrors. */
  protected async native<R>(operation: string, subject: unknown, call: () => Promise<R>): Promise<R> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof TypeError || err instanceof RangeError) throw err;
      throw fromNativeFailure(err, operation, subject);
    }
  }

  /** System calls and messages this handle has used, for benchmarks and metrics. */
  counters(): SocketCounters {
    return this.handle.counters();
  }

  /**
   * Closes the socket, without waiting for a call in flight: that call
   * sends nothing more, what it already sent keeps its result, and the
   * rest ends EBADF as not sent. Calls still queued reject with EBADF;
   * closing twice is harmless.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.handle.close();
    // The addon lets the socket go when the call in flight next reaches it;
    // one that had already sent its last request leaves that to this.
    void this.queue.run(async () => this.handle.close());
  }
}
