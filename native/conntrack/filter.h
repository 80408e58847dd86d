// Which entries a filter takes: the part the kernel applies itself, and
// the full test every decoded entry passes (dumps, deletes by filter and
// events all use it), so the answer is the same on every kernel.
//
// The kernel gets only what it applies correctly:
//  - the family (nfgenmsg), the mark and mask (CTA_MARK, CTA_MARK_MASK)
//    and status bits (CTA_STATUS, CTA_STATUS_MASK; 6.1 has them, older
//    kernels ignore them);
//  - the zone (CTA_ZONE: 6.18 applies it, 6.1 ignores it);
//  - tuple fields through CTA_FILTER (Linux 5.8+), only when the family
//    is given (the kernel refuses CTA_FILTER without one): the protocol,
//    IPv4 addresses, TCP and UDP ports (the kernel compares ports of no
//    other protocol), ICMP and ICMPv6 type, code and id.
// IPv6 addresses are never sent: the kernel's comparison of them is
// inverted (it keeps every entry except the one asked for, as of 6.18).
// Everything is tested again here: kernels that ignore a part, or lack
// it, still give the same entries.
#pragma once

#include "types.h"

namespace conntrack {

struct KernelFilter {
  uint32_t orig_flags = 0, reply_flags = 0;  // CTA_FILTER_*_FLAGS
  TupleMatch orig, reply;                    // the fields those flags name
  bool zone = false;
};

KernelFilter KernelPart(const Filter& f);

// Whether `e` is one of the entries `f` takes.
bool Matches(const Entry& e, const Filter& f);

// The key that names `e` for a delete: its original tuple, zone and id.
Key KeyOf(const Entry& e);

}  // namespace conntrack
