// Requests to bytes, as libipset builds them (see codec.h); the replies
// are decoded in codec.cc.
#include "codec.h"

#include <linux/netlink.h>

#include "../netlink/message.h"
#include "set_types.h"

namespace ipset {

namespace {

constexpr uint16_t kBe = NLA_F_NET_BYTEORDER;

// The family header and command-level protocol every request starts with.
void Start(nl::MessageBuilder& b, uint8_t protocol) {
  nfgenmsg g{};
  g.nfgen_family = NFPROTO_IPV4;
  g.version = NFNETLINK_V0;
  g.res_id = 0;
  b.Header(g);
  b.attrs().U8(IPSET_ATTR_PROTOCOL, protocol);
}

// libipset's cmdflags[]: CREATE/DESTROY/ADD/DEL are exclusive unless the
// caller asked for "exist" semantics, which the kernel reads as the absence
// of NLM_F_EXCL (flag_exist() in ip_set_core.c).
uint16_t CmdFlags(uint8_t cmd, bool exist) {
  switch (cmd) {
    case IPSET_CMD_CREATE:
      return NLM_F_CREATE | (exist ? 0 : NLM_F_EXCL);
    case IPSET_CMD_DESTROY:
    case IPSET_CMD_ADD:
    case IPSET_CMD_DEL:
      return exist ? 0 : NLM_F_EXCL;
    case IPSET_CMD_LIST:
    case IPSET_CMD_SAVE:
      return 0;  // the socket marks dumps
    default:
      return 0;
  }
}

void PutAddr(nl::AttrWriter& w, uint16_t type, uint8_t family, const nf_inet_addr& a) {
  const size_t nest = w.Begin(type);
  if (family == NFPROTO_IPV6)
    w.Raw(IPSET_ATTR_IPADDR_IPV6 | kBe, &a.in6, sizeof a.in6);
  else
    w.Raw(IPSET_ATTR_IPADDR_IPV4 | kBe, &a.ip, sizeof a.ip);
  w.End(nest);
}

// An element's attributes in ascending type order (libipset's order), so
// our bytes compare equal to the tool's.
void PutEntry(nl::AttrWriter& w, uint8_t family, const Entry& e) {
  if (e.has_ip) PutAddr(w, IPSET_ATTR_IP, family, e.ip);
  if (e.has_ip_to) PutAddr(w, IPSET_ATTR_IP_TO, family, e.ip_to);
  if (e.has_cidr) w.U8(IPSET_ATTR_CIDR, e.cidr);
  if (e.has_port) w.Be16(IPSET_ATTR_PORT | kBe, e.port);
  if (e.has_port_to) w.Be16(IPSET_ATTR_PORT_TO | kBe, e.port_to);
  if (e.has_timeout) w.Be32(IPSET_ATTR_TIMEOUT | kBe, e.timeout);
  if (e.has_proto) w.U8(IPSET_ATTR_PROTO, e.proto);
  const uint32_t cadt = (e.before ? IPSET_FLAG_BEFORE : 0) | (e.nomatch ? IPSET_FLAG_NOMATCH : 0) |
                        (e.physdev ? IPSET_FLAG_PHYSDEV : 0) |
                        (e.wildcard ? IPSET_FLAG_IFACE_WILDCARD : 0);
  if (cadt) w.Be32(IPSET_ATTR_CADT_FLAGS | kBe, cadt);
  if (e.has_mark) w.Be32(IPSET_ATTR_MARK | kBe, e.mark);
  if (e.has_ether) w.Raw(IPSET_ATTR_ETHER, e.ether, sizeof e.ether);
  if (!e.name.empty()) w.String(IPSET_ATTR_NAME, e.name);
  if (!e.nameref.empty()) w.String(IPSET_ATTR_NAMEREF, e.nameref);
  if (e.has_ip2) PutAddr(w, IPSET_ATTR_IP2, family, e.ip2);
  if (e.has_cidr2) w.U8(IPSET_ATTR_CIDR2, e.cidr2);
  if (e.has_ip2_to) PutAddr(w, IPSET_ATTR_IP2_TO, family, e.ip2_to);
  if (!e.iface.empty()) w.String(IPSET_ATTR_IFACE, e.iface);
  if (e.has_bytes) w.Be64(IPSET_ATTR_BYTES | kBe, e.bytes);
  if (e.has_packets) w.Be64(IPSET_ATTR_PACKETS | kBe, e.packets);
  if (e.has_comment) w.String(IPSET_ATTR_COMMENT, e.comment);
  if (e.has_skbmark)
    w.Be64(IPSET_ATTR_SKBMARK | kBe, static_cast<uint64_t>(e.skbmark) << 32 | e.skbmarkmask);
  if (e.has_skbprio) w.Be32(IPSET_ATTR_SKBPRIO | kBe, e.skbprio);
  if (e.has_skbqueue) w.Be16(IPSET_ATTR_SKBQUEUE | kBe, e.skbqueue);
}

}  // namespace

nl::Bytes EncodeProtocol(uint8_t protocol) {
  nl::MessageBuilder b(MessageType(IPSET_CMD_PROTOCOL), 0);
  Start(b, protocol);
  return b.Finish();
}

nl::Bytes EncodeTypeQuery(const SetType& type, uint8_t protocol) {
  nl::MessageBuilder b(MessageType(IPSET_CMD_TYPE), 0);
  Start(b, protocol);
  b.attrs().String(IPSET_ATTR_TYPENAME, type.name);
  b.attrs().U8(IPSET_ATTR_FAMILY, TypeQueryFamily(type));
  return b.Finish();
}

nl::Bytes EncodeCreate(const CreateSpec& s, uint8_t revision, uint8_t protocol, bool exist) {
  nl::MessageBuilder b(MessageType(IPSET_CMD_CREATE), CmdFlags(IPSET_CMD_CREATE, exist));
  Start(b, protocol);
  nl::AttrWriter& w = b.attrs();
  w.String(IPSET_ATTR_SETNAME, s.name);
  w.String(IPSET_ATTR_TYPENAME, s.type->name);
  w.U8(IPSET_ATTR_REVISION, revision);
  w.U8(IPSET_ATTR_FAMILY, CreateFamily(*s.type, s.family));
  const size_t data = w.Begin(IPSET_ATTR_DATA);
  if (s.has_ip_range) {
    PutAddr(w, IPSET_ATTR_IP, NFPROTO_IPV4, s.range_from);
    if (s.has_range_cidr)
      w.U8(IPSET_ATTR_CIDR, s.range_cidr);
    else
      PutAddr(w, IPSET_ATTR_IP_TO, NFPROTO_IPV4, s.range_to);
  }
  if (s.has_port_range) {
    w.Be16(IPSET_ATTR_PORT | kBe, s.port_from);
    w.Be16(IPSET_ATTR_PORT_TO | kBe, s.port_to);
  }
  if (s.has_timeout) w.Be32(IPSET_ATTR_TIMEOUT | kBe, s.timeout);
  if (s.cadt_flags) w.Be32(IPSET_ATTR_CADT_FLAGS | kBe, s.cadt_flags);
  if (s.has_markmask) w.Be32(IPSET_ATTR_MARKMASK | kBe, s.markmask);
  if (s.has_bitmask) PutAddr(w, IPSET_ATTR_BITMASK, CreateFamily(*s.type, s.family), s.bitmask);
  if (s.has_initval) w.Be32(IPSET_ATTR_INITVAL | kBe, s.initval);
  if (s.has_hashsize) w.Be32(IPSET_ATTR_HASHSIZE | kBe, s.hashsize);
  if (s.has_maxelem) w.Be32(IPSET_ATTR_MAXELEM | kBe, s.maxelem);
  if (s.has_netmask) w.U8(IPSET_ATTR_NETMASK, s.netmask);
  if (s.has_bucketsize) w.U8(IPSET_ATTR_BUCKETSIZE, s.bucketsize);
  if (s.has_size) w.Be32(IPSET_ATTR_SIZE | kBe, s.size);
  w.End(data);
  return b.Finish();
}

nl::Bytes EncodeNamed(uint8_t cmd, const std::string& name, uint8_t protocol) {
  nl::MessageBuilder b(MessageType(cmd), CmdFlags(cmd, false));
  Start(b, protocol);
  if (!name.empty()) b.attrs().String(IPSET_ATTR_SETNAME, name);
  return b.Finish();
}

nl::Bytes EncodeTwoNames(uint8_t cmd, const std::string& from, const std::string& to,
                         uint8_t protocol) {
  nl::MessageBuilder b(MessageType(cmd), CmdFlags(cmd, false));
  Start(b, protocol);
  b.attrs().String(IPSET_ATTR_SETNAME, from);
  b.attrs().String(IPSET_ATTR_SETNAME2, to);
  return b.Finish();
}

nl::Bytes EncodeList(uint8_t cmd, const std::string& name, uint32_t flags, uint8_t protocol) {
  nl::MessageBuilder b(MessageType(cmd), CmdFlags(cmd, false));
  Start(b, protocol);
  if (!name.empty()) b.attrs().String(IPSET_ATTR_SETNAME, name);
  if (flags) b.attrs().Be32(IPSET_ATTR_FLAGS | kBe, flags);
  return b.Finish();
}

nl::Bytes EncodeElement(uint8_t cmd, const std::string& name, const SetType& type,
                        uint8_t family, const Entry& e, uint8_t protocol, bool exist) {
  (void)type;
  nl::MessageBuilder b(MessageType(cmd), CmdFlags(cmd, exist));
  Start(b, protocol);
  nl::AttrWriter& w = b.attrs();
  w.String(IPSET_ATTR_SETNAME, name);
  const size_t data = w.Begin(IPSET_ATTR_DATA);
  PutEntry(w, family, e);
  if (cmd != IPSET_CMD_TEST) w.Be32(IPSET_ATTR_LINENO | kBe, 0);
  w.End(data);
  return b.Finish();
}

namespace {

// The shared body of the bulk encoders: entries[at(i)] for i = from, from+1,
// ... while the message stays within max_bytes (at least one element).
template <typename At>
nl::Bytes EncodeBulkWith(uint8_t cmd, const std::string& name, uint8_t family,
                         const std::vector<Entry>& entries, size_t count, At at, size_t from,
                         size_t max_bytes, uint8_t protocol, bool exist, size_t* next) {
  // The ADT nest's length is a u16: never let it pass 64 KiB.
  if (max_bytes > 65000) max_bytes = 65000;
  nl::MessageBuilder b(MessageType(cmd), CmdFlags(cmd, exist));
  Start(b, protocol);
  nl::AttrWriter& w = b.attrs();
  w.String(IPSET_ATTR_SETNAME, name);
  // Its presence asks the kernel to name a refused element by its LINENO.
  w.Be32(IPSET_ATTR_LINENO | kBe, static_cast<uint32_t>(at(from) + 1));
  const size_t adt = w.Begin(IPSET_ATTR_ADT);
  size_t i = from;
  for (; i < count; i++) {
    const size_t mark = w.size();
    const size_t data = w.Begin(IPSET_ATTR_DATA);
    const size_t index = at(i);
    PutEntry(w, family, entries[index]);
    w.Be32(IPSET_ATTR_LINENO | kBe, static_cast<uint32_t>(index + 1));
    w.End(data);
    if (w.size() > max_bytes && i > from) {
      w.Cancel(mark);
      break;
    }
  }
  w.End(adt);
  *next = i;
  return b.Finish();
}

}  // namespace

nl::Bytes EncodeBulk(uint8_t cmd, const std::string& name, const SetType& type, uint8_t family,
                     const std::vector<Entry>& entries, size_t from, size_t max_bytes,
                     uint8_t protocol, bool exist, size_t* next) {
  (void)type;
  return EncodeBulkWith(cmd, name, family, entries, entries.size(), [](size_t i) { return i; },
                        from, max_bytes, protocol, exist, next);
}

nl::Bytes EncodeBulkOf(uint8_t cmd, const std::string& name, uint8_t family,
                       const std::vector<Entry>& entries, const std::vector<uint32_t>& order,
                       size_t from, size_t max_bytes, uint8_t protocol, bool exist, size_t* next) {
  return EncodeBulkWith(cmd, name, family, entries, order.size(),
                        [&order](size_t i) { return static_cast<size_t>(order[i]); }, from,
                        max_bytes, protocol, exist, next);
}

}  // namespace ipset
