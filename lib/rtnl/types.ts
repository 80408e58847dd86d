/**
 * The public rtnetlink types: links and addresses as the kernel reports
 * them, and the per-address outcome of a change.
 */
import type { NetlinkError } from '../netlink/errors.js';

/** A network interface. */
export interface Link {
  /** The interface index (ifindex). */
  index: number;
  /** The interface name (`kube-ipvs0`). */
  name: string;
  /** Whether the link is administratively up (IFF_UP). */
  up: boolean;
  /** The link type (`dummy`, `veth`, ...), empty for physical devices. */
  kind: string;
}

/** An address bound to an interface, as `ip addr` shows it. */
export interface InterfaceAddress {
  /** IPv4 or IPv6. */
  family: 'inet' | 'inet6';
  /** The address, canonical text (dotted quad, RFC 5952 IPv6). */
  address: string;
  /** The prefix length (`/24`). */
  prefixLength: number;
  /** The index of the link it is on. */
  index: number;
  /** The name of the link it is on; set by the calls that were given a link name. */
  link?: string;
  /** The address's label (IFA_LABEL), when the kernel reports one (IPv4). */
  label?: string;
  /** The scope (RT_SCOPE_*: 0 global, 253 link, 254 host). */
  scope: number;
  /** IFA_F_* flags. */
  flags: number;
}

/** The outcome of adding or removing one address: each address of a call gets its own. */
export type AddressResult =
  | {
      /** The address as it was passed. */
      address: string;
      /** The change was made. */
      ok: true;
    }
  | {
      /** The address as it was passed. */
      address: string;
      /** The kernel refused this address (others of the same call may have gone in). */
      ok: false;
      /** Why. */
      error: NetlinkError;
    };

/** Where splitAddresses() found each address. */
export interface SplitAddresses {
  /** The link, or undefined when there is no link of that name (then every address is elsewhere). */
  link: Link | undefined;
  /** The addresses on the link. */
  on: InterfaceAddress[];
  /** The addresses on every other link. */
  elsewhere: InterfaceAddress[];
}
