/**
 * IPVS constants, read from the addon, which takes them from <linux/ip_vs.h>
 * at build time: nothing here is retyped from the header.
 */
import { native } from '../netlink/binding.js';

const c = native.ipvsConstants;

function get(name: string): number {
  const v = c[name];
  if (typeof v !== 'number') throw new Error(`ipvs-netlink: the addon lacks constant ${name}`);
  return v;
}

export const AF_INET = get('AF_INET');
export const AF_INET6 = get('AF_INET6');
export const IPPROTO = { tcp: get('IPPROTO_TCP'), udp: get('IPPROTO_UDP'), sctp: get('IPPROTO_SCTP') } as const;

export const CMD = {
  NEW_SERVICE: get('IPVS_CMD_NEW_SERVICE'),
  SET_SERVICE: get('IPVS_CMD_SET_SERVICE'),
  DEL_SERVICE: get('IPVS_CMD_DEL_SERVICE'),
  GET_SERVICE: get('IPVS_CMD_GET_SERVICE'),
  NEW_DEST: get('IPVS_CMD_NEW_DEST'),
  SET_DEST: get('IPVS_CMD_SET_DEST'),
  DEL_DEST: get('IPVS_CMD_DEL_DEST'),
  GET_DEST: get('IPVS_CMD_GET_DEST'),
  NEW_DAEMON: get('IPVS_CMD_NEW_DAEMON'),
  DEL_DAEMON: get('IPVS_CMD_DEL_DAEMON'),
  GET_DAEMON: get('IPVS_CMD_GET_DAEMON'),
  SET_CONFIG: get('IPVS_CMD_SET_CONFIG'),
  GET_CONFIG: get('IPVS_CMD_GET_CONFIG'),
  GET_INFO: get('IPVS_CMD_GET_INFO'),
  ZERO: get('IPVS_CMD_ZERO'),
  FLUSH: get('IPVS_CMD_FLUSH'),
} as const;

export const SVC_F = {
  PERSISTENT: get('IP_VS_SVC_F_PERSISTENT'),
  HASHED: get('IP_VS_SVC_F_HASHED'),
  ONEPACKET: get('IP_VS_SVC_F_ONEPACKET'),
  SCHED1: get('IP_VS_SVC_F_SCHED1'),
  SCHED2: get('IP_VS_SVC_F_SCHED2'),
  SCHED3: get('IP_VS_SVC_F_SCHED3'),
} as const;

/** Forwarding methods by the names ipvsadm's manual uses. */
export const FORWARD = {
  masq: get('IP_VS_CONN_F_MASQ'),
  local: get('IP_VS_CONN_F_LOCALNODE'),
  tunnel: get('IP_VS_CONN_F_TUNNEL'),
  route: get('IP_VS_CONN_F_DROUTE'),
  bypass: get('IP_VS_CONN_F_BYPASS'),
} as const;

export const TUNNEL_TYPE = {
  ipip: get('IP_VS_CONN_F_TUNNEL_TYPE_IPIP'),
  gue: get('IP_VS_CONN_F_TUNNEL_TYPE_GUE'),
  gre: get('IP_VS_CONN_F_TUNNEL_TYPE_GRE'),
} as const;

export const TUNNEL_FLAG = {
  nocsum: get('IP_VS_TUNNEL_ENCAP_FLAG_NOCSUM'),
  csum: get('IP_VS_TUNNEL_ENCAP_FLAG_CSUM'),
  remcsum: get('IP_VS_TUNNEL_ENCAP_FLAG_REMCSUM'),
} as const;

export const DAEMON_STATE = {
  master: get('IP_VS_STATE_MASTER'),
  backup: get('IP_VS_STATE_BACKUP'),
} as const;

export const SCHEDNAME_MAXLEN = get('IP_VS_SCHEDNAME_MAXLEN');
export const PENAME_MAXLEN = get('IP_VS_PENAME_MAXLEN');
export const IFNAME_MAXLEN = get('IP_VS_IFNAME_MAXLEN');
export const VERSION_CODE = get('IP_VS_VERSION_CODE');

/** Reverse lookup: the name for a number in one of the tables above. */
const reverse = new WeakMap<object, Map<number, string>>();
export function nameOf<T extends Record<string, number>>(table: T, value: number): keyof T | undefined {
  // Cached per table: this runs for every destination of a dump.
  let m = reverse.get(table);
  if (!m) {
    m = new Map();
    for (const [k, v] of Object.entries(table)) if (!m.has(v)) m.set(v, k);
    reverse.set(table, m);
  }
  return m.get(value) as keyof T | undefined;
}
