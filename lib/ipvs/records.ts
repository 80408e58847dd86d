/**
 * The layout of the fixed-size records that carry IPVS requests to the
 * addon and replies back, a whole batch per buffer (see
 * native/ipvs/records.h for why). The offsets come from the addon, which
 * defines them; nothing here is retyped.
 */
import { endianness } from 'node:os';

import { native } from '../netlink/binding.js';

type Table = Record<string, number>;
const layout = native.ipvsRecordLayout as { request: Table; reply: Table; flags: Table; kinds: Table };

function table<K extends string>(t: Table, names: readonly K[], what: string): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const n of names) {
    if (typeof t[n] !== 'number') throw new Error(`ipvs-netlink: the addon's ${what} layout lacks ${n}`);
    out[n] = t[n];
  }
  return Object.freeze(out);
}

/** Request record field offsets (bytes) and its size. */
export const REQ = table(
  layout.request,
  [
    'size', 'Cmd', 'Flags', 'SvcAf', 'SvcProtocol', 'SvcPort', 'SvcFwmark', 'SvcAddr', 'SvcFlags', 'SvcMask',
    'SvcTimeout', 'SvcNetmask', 'SvcSched', 'SvcPe', 'DestAf', 'DestPort', 'DestAddr', 'DestFwd', 'DestWeight',
    'DestUThresh', 'DestLThresh', 'DestTunType', 'DestTunPort', 'DestTunFlags', 'TimeoutTcp', 'TimeoutTcpFin',
    'TimeoutUdp', 'DaemonState', 'DaemonGroup', 'DaemonSyncId', 'DaemonIfn', 'DaemonMaxlen', 'DaemonPort',
    'DaemonTtl', 'DaemonHas', 'DaemonGroupAf',
  ] as const,
  'request',
);

/** Reply record field offsets (bytes) and its size. */
export const REP = table(
  layout.reply,
  [
    'size', 'Kind', 'HasStats', 'HasTunnel', 'Request', 'Af', 'Port', 'Addr', 'AddrText', 'SvcProtocol', 'SvcSched',
    'SvcFwmark', 'SvcFlags', 'SvcTimeout', 'SvcNetmask', 'SvcPe', 'DestFwd', 'DestWeight', 'DestUThresh',
    'DestLThresh', 'DestActive', 'DestInactive', 'DestPersist', 'DestTunType', 'DestTunPort', 'DestTunFlags',
    'Stats', 'DaemonState', 'DaemonSyncId', 'DaemonIfn', 'DaemonMaxlen', 'DaemonPort', 'DaemonTtl', 'DaemonHas',
    'DaemonGroupAf', 'DaemonGroup', 'InfoVersion', 'InfoConnTab', 'TimeoutTcp', 'TimeoutTcpFin', 'TimeoutUdp',
  ] as const,
  'reply',
);

/** Request flag bits, and the daemon's "has" bits. */
export const FLAG = table(
  layout.flags,
  [
    'hasService', 'serviceKeyOnly', 'hasDest', 'destKeyOnly', 'dump', 'destHasAf', 'hasTimeouts', 'hasDaemon',
    'daemonHasMaxlen', 'daemonHasPort', 'daemonHasTtl',
  ] as const,
  'flag',
);

/** Reply record kinds. */
export const KIND = table(layout.kinds, ['service', 'destination', 'daemon', 'info', 'timeouts'] as const, 'kind');

/** Records hold numbers in the host's byte order. */
export const LITTLE_ENDIAN = endianness() === 'LE';
