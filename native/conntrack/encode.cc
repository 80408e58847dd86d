#include "codec.h"

#include "../netlink/message.h"
#include "filter.h"

namespace conntrack {

namespace {

// The nfgenmsg version that makes a flush honour its family: the kernel
// (since 4.19) reads any nonzero version so, and the uapi header names
// only NFNETLINK_V0.
constexpr uint8_t kFamilyFlushVersion = NFNETLINK_V0 + 1;

void Header(nl::MessageBuilder& b, uint8_t family, uint8_t version = NFNETLINK_V0) {
  nfgenmsg g{};
  g.nfgen_family = family;
  g.version = version;
  b.Header(g);
}

void AddressAttrs(nl::AttrWriter& w, uint8_t family, uint32_t fields, const nf_inet_addr& src,
                  const nf_inet_addr& dst) {
  const size_t ip = w.Begin(CTA_TUPLE_IP);
  const bool v6 = family == NFPROTO_IPV6;
  if (fields & field::kSrc) w.Raw(v6 ? CTA_IP_V6_SRC : CTA_IP_V4_SRC, &src, v6 ? 16 : 4);
  if (fields & field::kDst) w.Raw(v6 ? CTA_IP_V6_DST : CTA_IP_V4_DST, &dst, v6 ? 16 : 4);
  w.End(ip);
}

// One tuple nest: the fields named in `fields` (a key names them all).
void TupleAttrs(nl::AttrWriter& w, uint16_t type, uint8_t family, uint8_t proto, const TupleMatch& t) {
  const size_t nest = w.Begin(type);
  if (t.fields & (field::kSrc | field::kDst)) AddressAttrs(w, family, t.fields, t.src, t.dst);
  const size_t p = w.Begin(CTA_TUPLE_PROTO);
  w.U8(CTA_PROTO_NUM, proto);
  if (HasPorts(proto)) {
    if (t.fields & field::kSport) w.Be16(CTA_PROTO_SRC_PORT, t.sport);
    if (t.fields & field::kDport) w.Be16(CTA_PROTO_DST_PORT, t.dport);
  } else if (IsIcmp(proto)) {
    // Code, type, id: the order the tool sends them in.
    const bool v6 = proto == IPPROTO_ICMPV6;
    if (t.fields & field::kIcmpCode) w.U8(v6 ? CTA_PROTO_ICMPV6_CODE : CTA_PROTO_ICMP_CODE, t.icmp_code);
    if (t.fields & field::kIcmpType) w.U8(v6 ? CTA_PROTO_ICMPV6_TYPE : CTA_PROTO_ICMP_TYPE, t.icmp_type);
    if (t.fields & field::kIcmpId) w.Be16(v6 ? CTA_PROTO_ICMPV6_ID : CTA_PROTO_ICMP_ID, t.icmp_id);
  }
  w.End(p);
  if (t.fields & field::kZone) w.Be16(CTA_TUPLE_ZONE, t.zone);
  w.End(nest);
}

TupleMatch KeyFields(const Tuple& t) {
  TupleMatch m;
  m.fields = field::kSrc | field::kDst;
  m.src = t.src;
  m.dst = t.dst;
  if (t.has_ports) {
    m.fields |= field::kSport | field::kDport;
    m.sport = t.sport;
    m.dport = t.dport;
  }
  if (t.has_icmp) {
    m.fields |= field::kIcmpType | field::kIcmpCode | field::kIcmpId;
    m.icmp_type = t.icmp_type;
    m.icmp_code = t.icmp_code;
    m.icmp_id = t.icmp_id;
  }
  if (t.has_zone) {
    m.fields |= field::kZone;
    m.zone = t.zone;
  }
  return m;
}

void KeyMessage(nl::MessageBuilder& b, const Key& key, bool with_id) {
  Header(b, key.family);
  nl::AttrWriter& w = b.attrs();
  TupleAttrs(w, key.reply_direction ? CTA_TUPLE_REPLY : CTA_TUPLE_ORIG, key.family, key.tuple.proto,
             KeyFields(key.tuple));
  if (with_id && key.has_id) w.Be32(CTA_ID, key.id);
  if (key.has_zone) w.Be16(CTA_ZONE, key.zone);
  b.Close();
}

}  // namespace

nl::Bytes EncodeDump(const Filter& filter) {
  const KernelFilter k = KernelPart(filter);
  nl::MessageBuilder b(MessageType(IPCTNL_MSG_CT_GET), 0);
  Header(b, filter.family);
  nl::AttrWriter& w = b.attrs();
  if (k.orig_flags) TupleAttrs(w, CTA_TUPLE_ORIG, filter.family, filter.proto, k.orig);
  if (k.reply_flags) TupleAttrs(w, CTA_TUPLE_REPLY, filter.family, filter.proto, k.reply);
  if (filter.status_mask) w.Be32(CTA_STATUS, filter.status_value);
  if (filter.has_mark) w.Be32(CTA_MARK, filter.mark);
  if (k.zone) w.Be16(CTA_ZONE, filter.zone);
  if (filter.has_mark) w.Be32(CTA_MARK_MASK, filter.mark_mask);
  if (k.orig_flags || k.reply_flags) {
    const size_t f = w.Begin(CTA_FILTER);
    if (k.orig_flags) w.U32(CTA_FILTER_ORIG_FLAGS, k.orig_flags);
    if (k.reply_flags) w.U32(CTA_FILTER_REPLY_FLAGS, k.reply_flags);
    w.End(f);
  }
  if (filter.status_mask) w.Be32(CTA_STATUS_MASK, filter.status_mask);
  return b.Finish();
}

nl::Bytes EncodeGet(const Key& key) {
  nl::MessageBuilder b(MessageType(IPCTNL_MSG_CT_GET), 0);
  KeyMessage(b, key, false);
  return b.Finish();
}

void EncodeDelete(const Key& key, nl::Bytes& out) {
  nl::MessageBuilder b(out, MessageType(IPCTNL_MSG_CT_DELETE), 0);
  KeyMessage(b, key, true);
}

nl::Bytes EncodeDelete(const Key& key) {
  nl::Bytes out;
  EncodeDelete(key, out);
  return out;
}

nl::Bytes EncodeFlush(uint8_t family) {
  nl::MessageBuilder b(MessageType(IPCTNL_MSG_CT_DELETE), 0);
  Header(b, family, family ? kFamilyFlushVersion : NFNETLINK_V0);
  return b.Finish();
}

nl::Bytes EncodeStatsCpu() {
  nl::MessageBuilder b(MessageType(IPCTNL_MSG_CT_GET_STATS_CPU), 0);
  Header(b, AF_UNSPEC);
  return b.Finish();
}

nl::Bytes EncodeStatsGlobal() {
  nl::MessageBuilder b(MessageType(IPCTNL_MSG_CT_GET_STATS), 0);
  Header(b, AF_UNSPEC);
  return b.Finish();
}

}  // namespace conntrack
