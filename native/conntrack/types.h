// What the conntrack codec works with: an entry as the kernel reports it
// (tuples, status, timeout, counters...), the key that names one entry for
// get and delete, and a filter for dumps, deletes and events. Numbers are
// in host order; addresses in union nf_inet_addr form (IPv4 in the first
// four bytes).
#pragma once

// glibc's <netinet/in.h> first: the kernel headers then leave its types alone.
#include <netinet/in.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include <cstdint>
#include <string>

namespace conntrack {

// The tuple filter flags of CTA_FILTER_ORIG_FLAGS / CTA_FILTER_REPLY_FLAGS.
// They are part of the kernel's ABI but live in its private
// nf_internals.h (CTA_FILTER_F_*), not in any uapi header, so they are
// spelled here once; the kernel refuses (EINVAL) any bit it does not know.
namespace filter_flag {
enum : uint32_t {
  kIpSrc = 1u << 0, kIpDst = 1u << 1, kTupleZone = 1u << 2, kProtoNum = 1u << 3,
  kSrcPort = 1u << 4, kDstPort = 1u << 5,
  kIcmpType = 1u << 6, kIcmpCode = 1u << 7, kIcmpId = 1u << 8,
  kIcmpv6Type = 1u << 9, kIcmpv6Code = 1u << 10, kIcmpv6Id = 1u << 11,
};
}  // namespace filter_flag

// Protocols whose tuples carry ports, and the ICMP family.
inline bool HasPorts(uint8_t proto) {
  return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP ||
         proto == IPPROTO_DCCP || proto == IPPROTO_UDPLITE;
}
inline bool IsIcmp(uint8_t proto) { return proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6; }

// One direction of a connection.
struct Tuple {
  uint8_t proto = 0;
  nf_inet_addr src{}, dst{};
  bool has_ports = false;
  uint16_t sport = 0, dport = 0;
  bool has_icmp = false;
  uint8_t icmp_type = 0, icmp_code = 0;
  uint16_t icmp_id = 0;
  bool has_zone = false;  // a zone for this direction only (CTA_TUPLE_ZONE)
  uint16_t zone = 0;
};

// Which optional parts an entry came with (events leave some out).
namespace present {
enum : uint32_t {
  kStatus = 1u << 0,
  kTimeout = 1u << 1,
  kMark = 1u << 2,
  kId = 1u << 3,
  kUse = 1u << 4,
  kCountersOrig = 1u << 5,
  kCountersReply = 1u << 6,
  kState = 1u << 7,          // TCP / SCTP / DCCP state
  kTimestamp = 1u << 8,      // start (stop only once destroyed)
  kTimestampStop = 1u << 9,
  kLabels = 1u << 10,
  kHelper = 1u << 11,
  kReply = 1u << 12,
};
}  // namespace present

// What a conntrack message reports. `event` is the kind of an event
// message (kNone for a dump or get reply).
enum class Event : uint8_t { kNone = 0, kNew = 1, kUpdate = 2, kDestroy = 3 };

struct Entry {
  Event event = Event::kNone;
  uint8_t family = 0;  // NFPROTO_IPV4 / NFPROTO_IPV6
  Tuple orig, reply;
  uint32_t present = 0;
  uint32_t status = 0, timeout = 0, mark = 0, id = 0, use = 0;
  uint16_t zone = 0;
  uint8_t state = 0;  // CTA_PROTOINFO_{TCP,SCTP,DCCP}_STATE, by orig.proto
  uint64_t packets_orig = 0, bytes_orig = 0, packets_reply = 0, bytes_reply = 0;
  uint64_t start_ns = 0, stop_ns = 0;
  uint8_t labels[16] = {};
  std::string helper;
};

// Which fields of a tuple a filter or key constrains: the kernel's own
// CTA_FILTER bits (the ICMP ones standing for ICMPv6 too).
namespace field {
constexpr uint32_t kSrc = filter_flag::kIpSrc, kDst = filter_flag::kIpDst;
constexpr uint32_t kSport = filter_flag::kSrcPort, kDport = filter_flag::kDstPort;
constexpr uint32_t kIcmpType = filter_flag::kIcmpType, kIcmpCode = filter_flag::kIcmpCode;
constexpr uint32_t kIcmpId = filter_flag::kIcmpId, kZone = filter_flag::kTupleZone;
}  // namespace field

struct TupleMatch {
  uint32_t fields = 0;
  nf_inet_addr src{}, dst{};
  uint16_t sport = 0, dport = 0;
  uint8_t icmp_type = 0, icmp_code = 0;
  uint16_t icmp_id = 0;
  uint16_t zone = 0;
};

// Entries a call is about. Every part is optional; an empty filter takes
// everything. Addresses are of `family`, which the typed layer sets
// whenever the filter names an address.
struct Filter {
  uint8_t family = 0;  // 0: every family
  bool has_proto = false;
  uint8_t proto = 0;
  TupleMatch orig, reply;
  bool has_zone = false;
  uint16_t zone = 0;
  bool has_mark = false;
  uint32_t mark = 0, mark_mask = 0xffffffff;
  uint32_t status_mask = 0, status_value = 0;  // (status & mask) == value
};

// One entry to get or delete: its original (or reply) tuple, zone and,
// for a delete, optionally its id (the kernel then deletes it only if the
// entry with that tuple is still the same one).
struct Key {
  uint8_t family = NFPROTO_IPV4;
  bool reply_direction = false;  // the tuple is the reply one
  Tuple tuple;
  bool has_zone = false;
  uint16_t zone = 0;
  bool has_id = false;
  uint32_t id = 0;
};

}  // namespace conntrack
