/**
 * What failed in an IPVS batch, as NetlinkErrors: the addon's per-request
 * failure records keep their parts, and each errno gets what IPVS means by
 * it (ip_vs_ctl.c) as the hint.
 */
import { NetlinkError } from '../netlink/errors.js';
import type { NativeFailure } from './reply-reader.js';

/** What IPVS means by the errnos it answers with (ip_vs_ctl.c). */
const HINTS: Readonly<Record<string, string>> = {
  EEXIST: 'it already exists',
  ESRCH: 'no such virtual service',
  ENOENT: 'no such destination, or the scheduler / persistence engine module is not available',
  ERANGE: 'weight below 0 or lower threshold above upper threshold',
  // A destination is checked against the namespace's routes: an IPv4 one in
  // a namespace whose loopback was never up finds no routing table at all.
  EINVAL:
    'the kernel refused the attributes (missing field, bad netmask, GUE tunnel without port, or mixed families without tunnel forwarding), ' +
    'or a destination address the network namespace does not route as unicast (multicast, IPv4 broadcast, IPv6 link-local; any IPv4 address while ' +
    "the namespace's loopback has never been up, as `ip netns add` leaves it: `ip link set lo up` there)",
  EPERM: 'needs CAP_NET_ADMIN in the network namespace',
  EAFNOSUPPORT: 'the kernel was built without IPv6 IPVS support',
};

/**
 * One request's failure. The kernel's refusal carries its extended-ack text
 * and IPVS's meaning of the errno; a broken conversation (`syscall` set)
 * carries the addon's account of it instead, and no hint: the kernel never
 * judged the request.
 */
export function errorOf(f: NativeFailure, operation: string, subject?: unknown): NetlinkError {
  if (f.syscall) return new NetlinkError({ errno: f.errno, code: f.code, operation, subject, syscall: f.syscall, text: f.text, detail: f.message });
  return new NetlinkError({ errno: f.errno, code: f.code, operation, subject, kernelMessage: f.message, text: f.text, hint: HINTS[f.code] });
}
