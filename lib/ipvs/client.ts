/**
 * Ipvs: the typed client for the kernel's IPVS table.
 *
 * Every method validates its arguments first (nothing is sent when they are
 * wrong), then hands plain objects to the addon, which talks to the kernel
 * off the JavaScript thread. Calls on one handle run one after another;
 * `apply` sends a whole batch in as few system calls as the socket allows.
 */
import { type NativeIpvsHandle, type NativeResult, native } from '../netlink/binding.js';
import { NetlinkClient, openHandle } from '../netlink/client.js';
import { NetlinkError } from '../netlink/errors.js';
import { CMD } from './constants.js';
import { type NativeDestinationOut, type NativeServiceOut, toDaemon, toDestination, toService } from './convert.js';
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
  Info,
  OpenOptions,
  Service,
  ServiceKey,
  ServiceSpec,
  ServiceWithDestinations,
  Timeouts,
} from './types.js';
import * as check from './validate.js';
import type { NativeOp } from './validate.js';

type Reply = NativeResult & {
  services?: NativeServiceOut[];
  destinations?: NativeDestinationOut[];
  daemons?: Record<string, unknown>[];
  info?: { version: number; connTableSize: number };
  timeouts?: Timeouts;
};

const BATCH_OPS: Record<BatchOp['op'], (op: BatchOp, field: string) => NativeOp> = {
  addService: (o, f) => ({ cmd: CMD.NEW_SERVICE, service: check.serviceSpec(o.service, `${f}.service`) }),
  updateService: (o, f) => ({ cmd: CMD.SET_SERVICE, service: check.serviceSpec(o.service, `${f}.service`) }),
  deleteService: (o, f) => ({ cmd: CMD.DEL_SERVICE, service: check.serviceKey(o.service, `${f}.service`), serviceKeyOnly: true }),
  addDestination: (o, f) => destOp(CMD.NEW_DEST, o, f, false),
  updateDestination: (o, f) => destOp(CMD.SET_DEST, o, f, false),
  deleteDestination: (o, f) => destOp(CMD.DEL_DEST, o, f, true),
};

function destOp(cmd: number, o: BatchOp, field: string, keyOnly: boolean): NativeOp {
  const service = check.serviceKey(o.service, `${field}.service`);
  const d = (o as { destination?: unknown }).destination;
  const destination = keyOnly
    ? check.destinationKey(d, service, `${field}.destination`)
    : check.destinationSpec(d, service, `${field}.destination`);
  return { cmd, service, serviceKeyOnly: true, destination, destinationKeyOnly: keyOnly };
}

function versionText(code: number): string {
  return `${(code >> 16) & 0xff}.${(code >> 8) & 0xff}.${code & 0xff}`;
}

export class Ipvs extends NetlinkClient<NativeIpvsHandle> {
  private constructor(handle: NativeIpvsHandle) {
    super(handle, 'Ipvs');
  }

  /** Opens a handle (in `netns` if given) and checks that the kernel has IPVS. */
  static async open(options: OpenOptions = {}): Promise<Ipvs> {
    return new Ipvs(await openHandle((o) => new native.IpvsHandle(o), options, 'Ipvs.open'));
  }

  /** Runs native ops as one batch, one result per op. */
  private run(ops: NativeOp[], operation: string): Promise<Reply[]> {
    return this.exclusive(operation, () => this.native(operation, undefined, () => this.handle.execute(ops) as Promise<Reply[]>));
  }

  /** Runs one op and throws its error, if any. */
  private async one(op: NativeOp, operation: string, subject?: unknown): Promise<Reply> {
    const [r] = await this.run([op], operation);
    if (r.errno) throw errorOf(r, operation, subject);
    return r;
  }

  async info(): Promise<Info> {
    const r = await this.one({ cmd: CMD.GET_INFO }, 'info');
    const i = r.info as { version: number; connTableSize: number };
    return { version: versionText(i.version), connTableSize: i.connTableSize };
  }

  async listServices(): Promise<Service[]> {
    const r = await this.one({ cmd: CMD.GET_SERVICE, dump: true }, 'listServices');
    return (r.services ?? []).map(toService);
  }

  async getService(key: ServiceKey): Promise<Service | undefined> {
    const service = check.serviceKey(key);
    const [r] = await this.run([{ cmd: CMD.GET_SERVICE, service, serviceKeyOnly: true }], 'getService');
    if (r.code === 'ESRCH') return undefined;
    if (r.errno) throw errorOf(r, 'getService', key);
    return r.services?.[0] && toService(r.services[0]);
  }

  async addService(spec: ServiceSpec): Promise<void> {
    await this.one({ cmd: CMD.NEW_SERVICE, service: check.serviceSpec(spec) }, 'addService', spec);
  }

  async updateService(spec: ServiceSpec): Promise<void> {
    await this.one({ cmd: CMD.SET_SERVICE, service: check.serviceSpec(spec) }, 'updateService', spec);
  }

  async deleteService(key: ServiceKey): Promise<void> {
    await this.one({ cmd: CMD.DEL_SERVICE, service: check.serviceKey(key), serviceKeyOnly: true }, 'deleteService', key);
  }

  /**
   * The destinations of one service. The kernel answers a destination dump
   * for a missing service with an empty list, so the service is looked up
   * in the same batch and a missing one is reported as ESRCH.
   */
  async listDestinations(key: ServiceKey): Promise<Destination[]> {
    const service = check.serviceKey(key);
    const [svc, dests] = await this.run(
      [
        { cmd: CMD.GET_SERVICE, service, serviceKeyOnly: true },
        { cmd: CMD.GET_DEST, service, serviceKeyOnly: true, dump: true },
      ],
      'listDestinations',
    );
    if (svc.errno) throw errorOf(svc, 'listDestinations', key);
    if (dests.errno) throw errorOf(dests, 'listDestinations', key);
    return (dests.destinations ?? []).map(toDestination);
  }

  async addDestination(key: ServiceKey, dest: DestinationSpec): Promise<void> {
    await this.one(destOp(CMD.NEW_DEST, { op: 'addDestination', service: key, destination: dest }, 'args', false), 'addDestination', { service: key, destination: dest });
  }

  async updateDestination(key: ServiceKey, dest: DestinationSpec): Promise<void> {
    await this.one(destOp(CMD.SET_DEST, { op: 'updateDestination', service: key, destination: dest }, 'args', false), 'updateDestination', { service: key, destination: dest });
  }

  async deleteDestination(key: ServiceKey, dest: DestinationKey): Promise<void> {
    await this.one(destOp(CMD.DEL_DEST, { op: 'deleteDestination', service: key, destination: dest }, 'args', true), 'deleteDestination', { service: key, destination: dest });
  }

  /** Every service with its destinations: one service dump, then one destination dump per service, all in one batch. */
  async dump(): Promise<ServiceWithDestinations[]> {
    const services = await this.listServices();
    if (services.length === 0) return [];
    const ops = services.map((s) => ({ cmd: CMD.GET_DEST, service: check.serviceKey(keyOf(s)), serviceKeyOnly: true, dump: true }));
    const replies = await this.run(ops, 'dump');
    return services.map((s, i) => {
      const r = replies[i];
      // A service deleted between the two dumps reads as having no destinations.
      if (r.errno) throw errorOf(r, 'dump', keyOf(s));
      // s is ours (fresh from toService): extend it rather than copy it.
      const out = s as ServiceWithDestinations;
      out.destinations = (r.destinations ?? []).map(toDestination);
      return out;
    });
  }

  /**
   * Many changes in one call. All ops are checked before anything is sent
   * (a bad one throws, naming `ops[i]....`); the kernel then applies each on
   * its own, and each gets its own result, in order.
   */
  async apply(ops: readonly BatchOp[]): Promise<BatchResult[]> {
    if (!Array.isArray(ops)) throw new TypeError('ops must be an array');
    const native = ops.map((o, i) => {
      const field = `ops[${i}]`;
      if (typeof o !== 'object' || o === null) throw new TypeError(`${field} must be an object`);
      const make = BATCH_OPS[o.op as BatchOp['op']];
      if (!make) throw new TypeError(`${field}.op must be one of ${Object.keys(BATCH_OPS).join(', ')}, got ${JSON.stringify(o.op)}`);
      return make(o, field);
    });
    if (native.length === 0) return [];
    const replies = await this.run(native, 'apply');
    return replies.map((r, i) =>
      r.errno ? { ok: false as const, error: errorOf(r, ops[i].op, subjectOf(ops[i])) } : { ok: true as const },
    );
  }

  async flush(): Promise<void> {
    await this.one({ cmd: CMD.FLUSH }, 'flush');
  }

  /** Zeroes the counters of one service, or of all when no key is given. */
  async zero(key?: ServiceKey): Promise<void> {
    const op: NativeOp = { cmd: CMD.ZERO };
    if (key !== undefined) {
      op.service = check.serviceKey(key);
      op.serviceKeyOnly = true;
    }
    await this.one(op, 'zero', key);
  }

  async getTimeouts(): Promise<Timeouts> {
    const r = await this.one({ cmd: CMD.GET_CONFIG }, 'getTimeouts');
    return r.timeouts as Timeouts;
  }

  /** Sets connection timeouts in seconds; a timeout left out is unchanged. */
  async setTimeouts(t: Partial<Timeouts>): Promise<void> {
    await this.one({ cmd: CMD.SET_CONFIG, timeouts: check.timeouts(t) }, 'setTimeouts', t);
  }

  async startDaemon(cfg: DaemonConfig): Promise<void> {
    await this.one({ cmd: CMD.NEW_DAEMON, daemon: check.daemonConfig(cfg) }, 'startDaemon', cfg);
  }

  async stopDaemon(state: DaemonState): Promise<void> {
    await this.one({ cmd: CMD.DEL_DAEMON, daemon: { state: check.daemonState(state, 'state') } }, 'stopDaemon', state);
  }

  async listDaemons(): Promise<Daemon[]> {
    const r = await this.one({ cmd: CMD.GET_DAEMON, dump: true }, 'listDaemons');
    return (r.daemons ?? []).map(toDaemon);
  }
}

/** The identity part of a service. */
export function keyOf(s: ServiceKey): ServiceKey {
  if ('fwmark' in s && s.fwmark) return { fwmark: s.fwmark, family: s.family };
  const a = s as AddressServiceKey;
  return { protocol: a.protocol, address: a.address, port: a.port };
}

function subjectOf(op: BatchOp): unknown {
  return 'destination' in op ? { service: op.service, destination: op.destination } : op.service;
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

function errorOf(r: NativeResult, operation: string, subject?: unknown): NetlinkError {
  return new NetlinkError({ errno: r.errno, code: r.code, operation, subject, kernelMessage: r.message, text: r.text, hint: HINTS[r.code] });
}

