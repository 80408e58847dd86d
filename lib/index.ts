/**
 * ipvs-netlink: program the Linux kernel's IPVS load balancer, ipset and
 * nf_tables over netlink.
 */
export { Ipvs, keyOf, formatList } from './ipvs/index.js';
export type * from './ipvs/types.js';
export * from './ipset/index.js';
export * from './rtnl/index.js';
export * from './conntrack/index.js';
export * from './nftables/index.js';
export { NetlinkError } from './netlink/errors.js';
export { pinNativeHeapThresholds, trimNativeHeap } from './netlink/native-heap.js';
export type { NetlinkErrorInit } from './netlink/errors.js';
export type { SocketCounters } from './netlink/binding.js';
