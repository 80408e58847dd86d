#include "filter.h"

#include <cstring>

namespace conntrack {

namespace {

// The fields of `in` the kernel compares correctly (see filter.h), and
// the CTA_FILTER flags that name them.
uint32_t KernelTuple(const Filter& f, const TupleMatch& in, TupleMatch& out) {
  uint32_t keep = 0;
  if (f.family == NFPROTO_IPV4) keep |= field::kSrc | field::kDst;
  if (f.proto == IPPROTO_TCP || f.proto == IPPROTO_UDP) keep |= field::kSport | field::kDport;
  else if (IsIcmp(f.proto)) keep |= field::kIcmpType | field::kIcmpCode | field::kIcmpId;
  out = in;
  out.fields = in.fields & keep;
  uint32_t flags = out.fields;
  if (f.proto == IPPROTO_ICMPV6) {
    // ICMPv6's fields have flags of their own.
    const uint32_t icmp = field::kIcmpType | field::kIcmpCode | field::kIcmpId;
    flags &= ~icmp;
    if (out.fields & field::kIcmpType) flags |= filter_flag::kIcmpv6Type;
    if (out.fields & field::kIcmpCode) flags |= filter_flag::kIcmpv6Code;
    if (out.fields & field::kIcmpId) flags |= filter_flag::kIcmpv6Id;
  }
  return flags;
}

bool SameAddress(uint8_t family, const nf_inet_addr& a, const nf_inet_addr& b) {
  return std::memcmp(&a, &b, family == NFPROTO_IPV6 ? 16 : 4) == 0;
}

bool TupleMatches(uint8_t family, const Tuple& t, const TupleMatch& m) {
  if (!m.fields) return true;
  if ((m.fields & field::kSrc) && !SameAddress(family, t.src, m.src)) return false;
  if ((m.fields & field::kDst) && !SameAddress(family, t.dst, m.dst)) return false;
  if ((m.fields & (field::kSport | field::kDport)) && !t.has_ports) return false;
  if ((m.fields & field::kSport) && t.sport != m.sport) return false;
  if ((m.fields & field::kDport) && t.dport != m.dport) return false;
  if ((m.fields & (field::kIcmpType | field::kIcmpCode | field::kIcmpId)) && !t.has_icmp) return false;
  if ((m.fields & field::kIcmpType) && t.icmp_type != m.icmp_type) return false;
  if ((m.fields & field::kIcmpCode) && t.icmp_code != m.icmp_code) return false;
  if ((m.fields & field::kIcmpId) && t.icmp_id != m.icmp_id) return false;
  if ((m.fields & field::kZone) && (!t.has_zone || t.zone != m.zone)) return false;
  return true;
}

}  // namespace

KernelFilter KernelPart(const Filter& f) {
  KernelFilter k;
  k.zone = f.has_zone;
  if (f.family != NFPROTO_IPV4 && f.family != NFPROTO_IPV6) return k;
  if (f.orig.fields || f.has_proto) {
    k.orig_flags = KernelTuple(f, f.orig, k.orig);
    if (f.has_proto) k.orig_flags |= filter_flag::kProtoNum;
  }
  if (f.reply.fields) {
    k.reply_flags = KernelTuple(f, f.reply, k.reply);
    // The kernel compares ports and ICMP fields only with the protocol.
    if (k.reply_flags && f.has_proto) k.reply_flags |= filter_flag::kProtoNum;
  }
  return k;
}

bool Matches(const Entry& e, const Filter& f) {
  if (f.family && e.family != f.family) return false;
  if (f.has_proto && e.orig.proto != f.proto) return false;
  if (f.has_zone) {
    const uint16_t zone = e.zone ? e.zone : e.orig.has_zone ? e.orig.zone : e.reply.zone;
    if (zone != f.zone) return false;
  }
  if (f.has_mark) {
    const uint32_t mark = (e.present & present::kMark) ? e.mark : 0;
    if ((mark & f.mark_mask) != f.mark) return false;
  }
  if (f.status_mask && (e.status & f.status_mask) != f.status_value) return false;
  if (!TupleMatches(e.family, e.orig, f.orig)) return false;
  if (f.reply.fields && (!(e.present & present::kReply) || !TupleMatches(e.family, e.reply, f.reply)))
    return false;
  return true;
}

Key KeyOf(const Entry& e) {
  Key k;
  k.family = e.family;
  k.tuple = e.orig;
  k.has_zone = e.zone != 0;
  k.zone = e.zone;
  k.has_id = (e.present & present::kId) != 0;
  k.id = e.id;
  return k;
}

}  // namespace conntrack
