/**
 * What every typed client (Ipvs, Ipset, Rtnl) shares: opening its native
 * handle, running calls one at a time on it, turning failures of the
 * conversation into NetlinkErrors, counters, and closing.
 */
import { constants } from 'node:os';

import { type HandleOptions, type SocketCounters } from './binding.js';
import { NetlinkError, fromNativeFailure } from './errors.js';
import { SerialQueue } from './serial-queue.js';

export interface OpenOptions {
  /** A network namespace path, e.g. /run/netns/NAME or /proc/PID/ns/net. */
  netns?: string;
  /** How long a request may wait for the kernel without progress (default 5000). */
  timeoutMs?: number;
}

export interface NativeHandle {
  open(): Promise<unknown>;
  close(): void;
  counters(): SocketCounters;
}

function checkOpenOptions(options: unknown): HandleOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
  const o = options as OpenOptions & { testDeafSockets?: number; testRcvbuf?: number; testIgnoreBudget?: boolean };
  for (const k of Object.keys(o))
    if (!['netns', 'timeoutMs', 'testDeafSockets', 'testRcvbuf', 'testIgnoreBudget'].includes(k) && (o as Record<string, unknown>)[k] !== undefined)
      throw new TypeError(`options.${k} is not an option (known: netns, timeoutMs)`);
  if (o.netns !== undefined && (typeof o.netns !== 'string' || o.netns === ''))
    throw new TypeError('options.netns must be a path such as /run/netns/NAME');
  if (o.timeoutMs !== undefined && (!Number.isInteger(o.timeoutMs) || o.timeoutMs < 1 || o.timeoutMs > 86_400_000))
    throw new RangeError('options.timeoutMs must be an integer from 1 to 86400000');
  // test*: tests only, see native/netlink/socket.h.
  return { netns: o.netns, timeoutMs: o.timeoutMs, testDeafSockets: o.testDeafSockets, testRcvbuf: o.testRcvbuf, testIgnoreBudget: o.testIgnoreBudget };
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

export abstract class NetlinkClient<H extends NativeHandle> {
  private readonly queue = new SerialQueue();
  private closed = false;

  protected constructor(
    protected readonly handle: H,
    private readonly kind: string,
  ) {}

  /**
   * Runs `task` alone on this handle (calls share one socket, and queueing
   * here keeps waiting callers off the libuv pool).
   */
  protected exclusive<R>(operation: string, task: () => Promise<R>): Promise<R> {
    return this.queue.run(async () => {
      if (this.closed) {
        throw new NetlinkError({ errno: constants.errno.EBADF, code: 'EBADF', operation, detail: `the ${this.kind} handle is closed` });
      }
      return task();
    });
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

  /** Closes the socket. Calls still queued fail; closing twice is harmless. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.handle.close();
  }
}
