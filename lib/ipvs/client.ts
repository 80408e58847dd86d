/**
 * Ipvs: the typed client for the kernel's IPVS table.
 *
 * Every method validates its arguments first (nothing is sent when they are
 * wrong), writing each request as a fixed-size record; the addon takes the
 * whole batch in one call and talks to the kernel off the JavaScript
 * thread. Calls on one handle run one after another; `apply` sends a whole
 * batch in as few system calls as the socket allows.
 */
import { type NativeIpvsHandle, native } from '../netlink/binding.js';
import { NetlinkClient, openHandle } from '../netlink/client.js';
import { knownFields, object, optionalBoolean, wrongType } from '../util/check.js';
import { batchResults, listDestinationsOp, writeBatch, writeOp } from './batch.js';
import { CMD } from './constants.js';
import { DumpReader } from './dump-reader.js';
import { errorOf } from './errors.js';
import { FLAG } from './records.js';
import { type NativeReplies, ReplyRecords, type RequestReplies } from './reply-reader.js';
import { RequestWriter } from './request-writer.js';
import type {
  AddressServiceKey,
  BatchOp,
  BatchResult,
  Daemon,
  DaemonConfig,
  DaemonState,
  Destination,
  DestinationKey,
  DestinationSpec,
  DumpOptions,
  Info,
  OpenOptions,
  Service,
  ServiceKey,
  ServiceRules,
  ServiceSpec,
  ServiceWithDestinations,
  Timeouts,
} from './types.js';

const DUMP_OPTIONS: ReadonlySet<string> = new Set(['stats']);

/**
 * The largest request buffer a handle keeps for its next batch (~21,000
 * ops): enough for an incremental sync's batches, while the buffer of a
 * cold start's 100,000 ops is not held for the life of the process.
 */
const MAX_SPARE_BYTES = 2 << 20;

/**
 * A handle on the kernel's IPVS table, in the caller's network namespace or
 * another. Argument errors throw before anything is sent (TypeError or
 * RangeError naming the field, util/check.ts); the kernel's refusals and
 * failures of the conversation reject with a NetlinkError.
 */
export class Ipvs extends NetlinkClient<NativeIpvsHandle> {
  /** The request buffer of the last batch, written into by the next one: its pages are already in memory. */
  private spare?: Uint8Array;

  private constructor(handle: NativeIpvsHandle) {
    super(handle, 'Ipvs');
  }

  /**
   * Opens a handle (in `netns` if given) and checks that the kernel has
   * IPVS: without it, rejects with EPROTONOSUPPORT saying how to load it.
   */
  static async open(options: OpenOptions = {}): Promise<Ipvs> {
    return new Ipvs(await openHandle((o) => new native.IpvsHandle(o), options, 'Ipvs.open'));
  }

  /**
   * Sends the written requests as one batch and reads what came back with
   * `read`. The reply records are a view the addon lends until the handle's
   * next call, so they are read here, before the next call can start.
   */
  private run<R>(w: RequestWriter, operation: string, read: (r: NativeReplies) => R): Promise<R> {
    return this.exclusive(operation, async () =>
      read(await this.native(operation, undefined, () => this.handle.execute(w.records(), w.count, w.strings()))),
    );
  }

  /**
   * Once the caller is idle, the last call's records are handed back too:
   * a call made at once (a loop of dumps) reuses the reply memory, which is
   * already paged in; otherwise a big reply's memory goes at the next turn
   * of the event loop, not at the handle's next call, which may be a resync
   * period away.
   */
  protected override releaseIdle(): void {
    this.handle.releaseReplies();
    super.releaseIdle();
  }

  /** Sends the requests and returns what came back for each; the first failure throws. */
  private each(w: RequestWriter, operation: string, subject?: unknown): Promise<RequestReplies[]> {
    return this.run(w, operation, (r) => {
      if (r.failures.length > 0) throw errorOf(r.failures[0], operation, subject);
      return new ReplyRecords(r.records, r.strings).byRequest(w.count);
    });
  }

  /** One request with no variable part (info, flush, config...). */
  private async simple(cmd: number, operation: string, flags = 0): Promise<RequestReplies> {
    const w = new RequestWriter();
    w.begin(cmd, flags);
    return (await this.each(w, operation))[0];
  }

  /** The IPVS version and the size of its connection table. */
  async info(): Promise<Info> {
    const r = await this.simple(CMD.GET_INFO, 'info');
    if (!r.info) throw new Error('ipvs-netlink: the kernel answered GET_INFO without info');
    return r.info;
  }

  /** Every virtual service, without destinations (see dump() for both in one call). */
  async listServices(): Promise<Service[]> {
    return (await this.simple(CMD.GET_SERVICE, 'listServices', FLAG.dump)).services;
  }

  /** One virtual service, or undefined when there is none with that key. */
  async getService(key: ServiceKey): Promise<Service | undefined> {
    const w = new RequestWriter();
    w.begin(CMD.GET_SERVICE);
    w.serviceKeyOnly(key, 'service');
    return this.run(w, 'getService', (r) => {
      if (r.failures.length > 0) {
        if (r.failures[0].code === 'ESRCH') return undefined;
        throw errorOf(r.failures[0], 'getService', key);
      }
      return new ReplyRecords(r.records, r.strings).byRequest(1)[0].services[0];
    });
  }

  /**
   * Adds a virtual service; one that exists fails with EEXIST. A Service
   * read back (listServices(), dump()) is taken as it is.
   */
  async addService(spec: ServiceSpec): Promise<void> {
    await this.single('addService', spec);
  }

  /** Changes a virtual service's scheduler, flags or persistence; a missing one fails with ESRCH. */
  async updateService(spec: ServiceSpec): Promise<void> {
    await this.single('updateService', spec);
  }

  /** Deletes a virtual service and its destinations; a missing one fails with ESRCH. */
  async deleteService(key: ServiceKey): Promise<void> {
    await this.single('deleteService', key);
  }

  /**
   * The destinations of one service. The kernel answers a destination dump
   * for a missing service with an empty list, so the service is looked up
   * in the same batch and a missing one is reported as ESRCH.
   */
  async listDestinations(key: ServiceKey): Promise<Destination[]> {
    const w = new RequestWriter(2);
    listDestinationsOp(w, key);
    return (await this.each(w, 'listDestinations', key))[1].destinations;
  }

  /** Adds a destination (real server) to a service; one that exists fails with EEXIST, a missing service with ESRCH. */
  async addDestination(key: ServiceKey, dest: DestinationSpec): Promise<void> {
    await this.single('addDestination', key, dest);
  }

  /** Changes a destination's weight, forwarding or thresholds; a missing one fails with ENOENT. */
  async updateDestination(key: ServiceKey, dest: DestinationSpec): Promise<void> {
    await this.single('updateDestination', key, dest);
  }

  /** Removes a destination from a service; a missing one fails with ENOENT. */
  async deleteDestination(key: ServiceKey, dest: DestinationKey): Promise<void> {
    await this.single('deleteDestination', key, dest);
  }

  /** One batch-style op on its own; its error throws. */
  private async single(op: BatchOp['op'], service: unknown, destination?: unknown): Promise<void> {
    const w = new RequestWriter();
    writeOp(w, op, service, destination);
    await this.each(w, op, destination === undefined ? service : { service, destination });
  }

  /**
   * Every service with its destinations, read in one call on the worker
   * thread: a service dump, then one destination dump per service (the
   * kernel serves one dump at a time per socket). A service deleted between
   * the two steps is left out. `{ stats: false }` leaves out the counters.
   * What it returns can be written back as it is (addService, apply).
   */
  async dump(): Promise<ServiceWithDestinations[]>;
  async dump(options: { stats: false }): Promise<ServiceRules[]>;
  async dump(options?: DumpOptions): Promise<ServiceWithDestinations[] | ServiceRules[]>;
  async dump(options: DumpOptions = {}): Promise<ServiceWithDestinations[] | ServiceRules[]> {
    knownFields(object(options, 'options'), DUMP_OPTIONS, 'options');
    const withStats = optionalBoolean(options.stats, 'options', true, 'stats');
    return this.exclusive('dump', async () => {
      // The records are read as the addon hands them over, while the
      // kernel is still answering; the reader ends with the result.
      const reader = new DumpReader(withStats);
      return reader.finish(await this.native('dump', undefined, () => this.handle.dump(reader.add)));
    });
  }

  /**
   * Many changes in one call. All ops are checked before anything is sent
   * (a bad one throws, naming `ops[i]....`); the kernel then applies each on
   * its own, and each gets its own result, in order. `listDestinations` ops
   * read in between: each sees the ops before it applied.
   */
  async apply(ops: readonly BatchOp[]): Promise<BatchResult[]> {
    if (!Array.isArray(ops)) throw wrongType('ops', 'an array', ops);
    if (ops.length === 0) return [];
    const w = new RequestWriter(ops.length, this.spare);
    this.spare = undefined; // one batch at a time writes into it
    const firstRequest = writeBatch(w, ops);
    try {
      return await this.run(w, 'apply', (r) => batchResults(ops, firstRequest, r));
    } finally {
      // The addon is done reading the records once the call settles.
      if (w.buffer().byteLength <= MAX_SPARE_BYTES) this.spare = w.buffer();
    }
  }

  /** Deletes every virtual service and destination. */
  async flush(): Promise<void> {
    await this.simple(CMD.FLUSH, 'flush');
  }

  /** Zeroes the counters of one service, or of all when no key is given. */
  async zero(key?: ServiceKey): Promise<void> {
    const w = new RequestWriter();
    w.begin(CMD.ZERO);
    if (key !== undefined) w.serviceKeyOnly(key, 'service');
    await this.each(w, 'zero', key);
  }

  /** The TCP, TCP FIN and UDP connection timeouts, in seconds (`ipvsadm --set`'s values). */
  async getTimeouts(): Promise<Timeouts> {
    const r = await this.simple(CMD.GET_CONFIG, 'getTimeouts');
    if (!r.timeouts) throw new Error('ipvs-netlink: the kernel answered GET_CONFIG without timeouts');
    return r.timeouts;
  }

  /** Sets connection timeouts in seconds; a timeout left out is unchanged. */
  async setTimeouts(t: Partial<Timeouts>): Promise<void> {
    const w = new RequestWriter();
    w.begin(CMD.SET_CONFIG);
    w.timeouts(t);
    await this.each(w, 'setTimeouts', t);
  }

  /** Starts a connection synchronisation daemon (`ipvsadm --start-daemon`). */
  async startDaemon(cfg: DaemonConfig): Promise<void> {
    const w = new RequestWriter();
    w.begin(CMD.NEW_DAEMON);
    w.daemonConfig(cfg);
    await this.each(w, 'startDaemon', cfg);
  }

  /** Stops the sync daemon in that state (see writeStopDaemon for what is sent). */
  async stopDaemon(state: DaemonState): Promise<void> {
    const w = new RequestWriter();
    writeStopDaemon(w, state);
    await this.each(w, 'stopDaemon', state);
  }

  /** The running sync daemons. */
  async listDaemons(): Promise<Daemon[]> {
    return (await this.simple(CMD.GET_DAEMON, 'listDaemons', FLAG.dump)).daemons;
  }
}

/**
 * The requests that stop a sync daemon: DEL_DAEMON, then GET_INFO in the
 * same sendmsg. The kernel answers nothing at all to a stop that finds the
 * daemon's thread not yet run (kthread_stop returns EINTR, and netlink sends
 * no ack for EINTR), though the daemon is gone; a stop right after a start
 * meets that. GET_INFO is always answered, and its answer settles the stop
 * before it: an error would have come first, so none means stopped.
 */
export function writeStopDaemon(w: RequestWriter, state: unknown): void {
  w.begin(CMD.DEL_DAEMON);
  w.daemonStop(state);
  w.begin(CMD.GET_INFO);
}

/** The identity part of a service (what getService and the destination methods take), from a key, a spec or a Service read back. */
export function keyOf(s: ServiceKey): ServiceKey {
  if ('fwmark' in s && s.fwmark) return { fwmark: s.fwmark, family: s.family };
  const a = s as AddressServiceKey;
  return { protocol: a.protocol, address: a.address, port: a.port };
}
