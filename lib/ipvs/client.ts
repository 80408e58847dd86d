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
import { NetlinkError } from '../netlink/errors.js';
import { CMD } from './constants.js';
import { FLAG } from './records.js';
import { type NativeFailure, type NativeReplies, ReplyRecords, type RequestReplies } from './reply-reader.js';
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

/** How each batch op is written: the command and the parts it sends. */
const BATCH_OPS: Record<BatchOp['op'], (w: RequestWriter, op: Record<string, unknown>) => void> = {
  addService: (w, o) => serviceOp(w, CMD.NEW_SERVICE, o.service),
  updateService: (w, o) => serviceOp(w, CMD.SET_SERVICE, o.service),
  deleteService: (w, o) => {
    w.begin(CMD.DEL_SERVICE);
    w.serviceKeyOnly(o.service, 'service');
  },
  addDestination: (w, o) => destinationOp(w, CMD.NEW_DEST, o.service, o.destination, false),
  updateDestination: (w, o) => destinationOp(w, CMD.SET_DEST, o.service, o.destination, false),
  deleteDestination: (w, o) => destinationOp(w, CMD.DEL_DEST, o.service, o.destination, true),
  listDestinations: (w, o) => listDestinationsOp(w, o.service),
};

/**
 * Two requests: the kernel answers a destination dump for a missing
 * service with an empty list, so the service is looked up first and a
 * missing one fails with ESRCH.
 */
function listDestinationsOp(w: RequestWriter, service: unknown): void {
  w.begin(CMD.GET_SERVICE);
  w.serviceKeyOnly(service, 'service');
  w.begin(CMD.GET_DEST, FLAG.dump);
  w.serviceKeyOnly(service, 'service');
}

function serviceOp(w: RequestWriter, cmd: number, spec: unknown): void {
  w.begin(cmd);
  w.serviceSpec(spec, 'service');
}

function destinationOp(w: RequestWriter, cmd: number, service: unknown, destination: unknown, keyOnly: boolean): void {
  w.begin(cmd);
  const af = w.serviceKeyOnly(service, 'service');
  if (keyOnly) w.destinationKey(destination, 'destination');
  else w.destinationSpec(destination, af, 'destination');
}

/** Every successful batch op shares this result. */
const OK: BatchResult = Object.freeze({ ok: true as const });

/**
 * The largest request buffer a handle keeps for its next batch (~21,000
 * ops): enough for an incremental sync's batches, while the buffer of a
 * cold start's 100,000 ops is not held for the life of the process.
 */
const MAX_SPARE_BYTES = 2 << 20;

export class Ipvs extends NetlinkClient<NativeIpvsHandle> {
  /** The request buffer of the last batch, written into by the next one: its pages are already in memory. */
  private spare?: Uint8Array;
  /** Hands the last reply records back to the addon when no call follows at once. */
  private release?: NodeJS.Immediate;

  private constructor(handle: NativeIpvsHandle) {
    super(handle, 'Ipvs');
  }

  /** Opens a handle (in `netns` if given) and checks that the kernel has IPVS. */
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
      this.reading(await this.native(operation, undefined, () => this.calling(() => this.handle.execute(w.records(), w.count, w.strings()))), read),
    );
  }

  /**
   * `read` the records, then hand them back once the caller is idle: a
   * call made at once (a loop of dumps) reuses the reply memory, which is
   * already paged in; otherwise a big reply's memory goes at the next turn
   * of the event loop, not at the handle's next call, which may be a
   * resync period away.
   */
  private reading<R>(replies: NativeReplies, read: (r: NativeReplies) => R): R {
    try {
      return read(replies);
    } finally {
      this.release ??= setImmediate(() => {
        this.release = undefined;
        this.handle.releaseReplies();
      });
      this.release.unref();
    }
  }

  /** Starts a native call: a release not yet made is not needed (the call reuses the memory, and its lease detaches the old view). */
  private calling(call: () => Promise<unknown>): Promise<NativeReplies> {
    if (this.release !== undefined) {
      clearImmediate(this.release);
      this.release = undefined;
    }
    return call() as Promise<NativeReplies>;
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

  async info(): Promise<Info> {
    const r = await this.simple(CMD.GET_INFO, 'info');
    if (!r.info) throw new Error('ipvs-netlink: the kernel answered GET_INFO without info');
    return r.info;
  }

  async listServices(): Promise<Service[]> {
    return (await this.simple(CMD.GET_SERVICE, 'listServices', FLAG.dump)).services;
  }

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

  async addService(spec: ServiceSpec): Promise<void> {
    await this.single('addService', spec);
  }

  async updateService(spec: ServiceSpec): Promise<void> {
    await this.single('updateService', spec);
  }

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

  async addDestination(key: ServiceKey, dest: DestinationSpec): Promise<void> {
    await this.single('addDestination', key, dest);
  }

  async updateDestination(key: ServiceKey, dest: DestinationSpec): Promise<void> {
    await this.single('updateDestination', key, dest);
  }

  async deleteDestination(key: ServiceKey, dest: DestinationKey): Promise<void> {
    await this.single('deleteDestination', key, dest);
  }

  /** One batch-style op on its own; its error throws. */
  private async single(op: BatchOp['op'], service: unknown, destination?: unknown): Promise<void> {
    const w = new RequestWriter();
    BATCH_OPS[op](w, { service, destination });
    await this.each(w, op, destination === undefined ? service : { service, destination });
  }

  /**
   * Every service with its destinations, read in one call on the worker
   * thread: a service dump, then one destination dump per service (the
   * kernel serves one dump at a time per socket). A service deleted between
   * the two steps is left out. `{ stats: false }` leaves out the counters.
   */
  async dump(): Promise<ServiceWithDestinations[]>;
  async dump(options: { stats: false }): Promise<ServiceRules[]>;
  async dump(options?: DumpOptions): Promise<ServiceWithDestinations[] | ServiceRules[]>;
  async dump(options: DumpOptions = {}): Promise<ServiceWithDestinations[] | ServiceRules[]> {
    if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
    if (options.stats !== undefined && typeof options.stats !== 'boolean') throw new TypeError('options.stats must be a boolean');
    const withStats = options.stats !== false;
    return this.exclusive('dump', async () =>
      this.reading(await this.native('dump', undefined, () => this.calling(() => this.handle.dump())), (r) => readDump(r, withStats)),
    );
  }


  /**
   * Many changes in one call. All ops are checked before anything is sent
   * (a bad one throws, naming `ops[i]....`); the kernel then applies each on
   * its own, and each gets its own result, in order. `listDestinations` ops
   * read in between: each sees the ops before it applied.
   */
  async apply(ops: readonly BatchOp[]): Promise<BatchResult[]> {
    if (!Array.isArray(ops)) throw new TypeError('ops must be an array');
    if (ops.length === 0) return [];
    const w = new RequestWriter(ops.length, this.spare);
    this.spare = undefined; // one batch at a time writes into it
    // Every op is one request, except reads (two): with reads, the first request of each op.
    const firstRequest = ops.some((o) => (o as { op?: unknown } | null)?.op === 'listDestinations') ? new Uint32Array(ops.length) : undefined;
    for (let i = 0; i < ops.length; i++) {
      if (firstRequest) firstRequest[i] = w.count;
      const o = ops[i] as unknown;
      if (typeof o !== 'object' || o === null) throw new TypeError(`ops[${i}] must be an object`);
      const name = (o as { op?: unknown }).op;
      const write = typeof name === 'string' && Object.prototype.hasOwnProperty.call(BATCH_OPS, name) ? BATCH_OPS[name as BatchOp['op']] : undefined;
      if (!write) throw new TypeError(`ops[${i}].op must be one of ${Object.keys(BATCH_OPS).join(', ')}, got ${JSON.stringify(name)}`);
      try {
        write(w, o as Record<string, unknown>);
      } catch (err) {
        throw withPrefix(err, `ops[${i}].`);
      }
    }
    try {
      return await this.run(w, 'apply', (r) => (firstRequest ? readResults(ops, firstRequest, r) : opResults(ops, r)));
    } finally {
      // The addon is done reading the records once the call settles.
      if (w.buffer().byteLength <= MAX_SPARE_BYTES) this.spare = w.buffer();
    }
  }

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

  async startDaemon(cfg: DaemonConfig): Promise<void> {
    const w = new RequestWriter();
    w.begin(CMD.NEW_DAEMON);
    w.daemonConfig(cfg);
    await this.each(w, 'startDaemon', cfg);
  }

  async stopDaemon(state: DaemonState): Promise<void> {
    const w = new RequestWriter();
    w.begin(CMD.DEL_DAEMON);
    w.daemonStop(state);
    await this.each(w, 'stopDaemon', state);
  }

  async listDaemons(): Promise<Daemon[]> {
    return (await this.simple(CMD.GET_DAEMON, 'listDaemons', FLAG.dump)).daemons;
  }
}


/** A dump's records: request 0 is the service dump, request i + 1 the destinations of service i. */
function readDump(r: NativeReplies, withStats: boolean): ServiceWithDestinations[] {
  const gone = new Set<number>();
  for (const f of r.failures) {
    if (f.index === 0) throw errorOf(f, 'dump');
    if (f.code === 'ESRCH' || f.code === 'ENOENT') gone.add(f.index - 1);
    else throw errorOf(f, 'dump');
  }
  const rec = new ReplyRecords(r.records, r.strings);
  const services: ServiceWithDestinations[] = [];
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
  return gone.size === 0 ? services : services.filter((_, i) => !gone.has(i));
}

/** The identity part of a service. */
export function keyOf(s: ServiceKey): ServiceKey {
  if ('fwmark' in s && s.fwmark) return { fwmark: s.fwmark, family: s.family };
  const a = s as AddressServiceKey;
  return { protocol: a.protocol, address: a.address, port: a.port };
}

/** One request per op: failures map straight to their ops. */
function opResults(ops: readonly BatchOp[], r: NativeReplies): BatchResult[] {
  const results: BatchResult[] = new Array(ops.length).fill(OK);
  for (const f of r.failures) results[f.index] = { ok: false, error: errorOf(f, ops[f.index].op, subjectOf(ops[f.index])) };
  return results;
}

/** A batch with reads: op i sent requests firstRequest[i]..; a read's destinations answer its second one. */
function readResults(ops: readonly BatchOp[], firstRequest: Uint32Array, r: NativeReplies): BatchResult[] {
  const results: BatchResult[] = new Array(ops.length).fill(OK);
  let op = 0;
  for (const f of r.failures) {
    while (op + 1 < ops.length && firstRequest[op + 1] <= f.index) op++;
    // A read whose service lookup failed fails once, with the lookup's error.
    if (!results[op].ok) continue;
    results[op] = { ok: false, error: errorOf(f, ops[op].op, subjectOf(ops[op])) };
  }
  let replies: ReplyRecords | undefined;
  for (let i = 0; i < ops.length; i++) {
    if (ops[i].op !== 'listDestinations' || !results[i].ok) continue;
    replies ??= new ReplyRecords(r.records, r.strings);
    results[i] = { ok: true, destinations: replies.destinationsOf(firstRequest[i] + 1) };
  }
  return results;
}

function subjectOf(op: BatchOp): unknown {
  return 'destination' in op ? { service: op.service, destination: op.destination } : op.service;
}

/** The same TypeError/RangeError with its field path prefixed (`ops[3].` + `service.port ...`). */
function withPrefix(err: unknown, prefix: string): unknown {
  if (err instanceof RangeError) return new RangeError(prefix + err.message);
  if (err instanceof TypeError) return new TypeError(prefix + err.message);
  return err;
}

/** What IPVS means by the errnos it answers with (ip_vs_ctl.c). */
const HINTS: Record<string, string> = {
  EEXIST: 'it already exists',
  ESRCH: 'no such virtual service',
  ENOENT: 'no such destination, or the scheduler / persistence engine module is not available',
  ERANGE: 'weight below 0 or lower threshold above upper threshold',
  EINVAL: 'the kernel refused the attributes (missing field, bad netmask, GUE tunnel without port, or mixed families without tunnel forwarding)',
  EPERM: 'needs CAP_NET_ADMIN in the network namespace',
  EAFNOSUPPORT: 'the kernel was built without IPv6 IPVS support',
};

/**
 * One request's failure. The kernel's refusal carries its extended-ack text
 * and IPVS's meaning of the errno; a broken conversation (`syscall` set)
 * carries the addon's account of it instead, and no hint: the kernel never
 * judged the request.
 */
function errorOf(f: NativeFailure, operation: string, subject?: unknown): NetlinkError {
  if (f.syscall) return new NetlinkError({ errno: f.errno, code: f.code, operation, subject, syscall: f.syscall, text: f.text, detail: f.message });
  return new NetlinkError({ errno: f.errno, code: f.code, operation, subject, kernelMessage: f.message, text: f.text, hint: HINTS[f.code] });
}
