#include "codec.h"

#include <endian.h>
#include <linux/netlink.h>

#include <cstring>

#include "../netlink/message.h"
#include "entry_text.h"
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

// The attributes after the nlmsghdr and nfgenmsg of a message.
bool Payload(const nl::Bytes& msg, const uint8_t** data, size_t* len, std::string& error) {
  const size_t head = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg));
  if (msg.size() < head) {
    error = "message shorter than its headers";
    return false;
  }
  nlmsghdr h;
  std::memcpy(&h, msg.data(), sizeof h);
  if (h.nlmsg_len < head || h.nlmsg_len > msg.size()) {
    error = "message length out of bounds";
    return false;
  }
  *data = msg.data() + head;
  *len = h.nlmsg_len - head;
  return true;
}

bool GetAddr(const nl::Attr& nest, nf_inet_addr& out, std::string& error) {
  nl::AttrTable t(nest.data, nest.len, IPSET_ATTR_IPADDR_MAX);
  if (!t.ok()) {
    error = "address: " + t.error();
    return false;
  }
  std::memset(&out, 0, sizeof out);
  if (const nl::Attr* a = t.Get(IPSET_ATTR_IPADDR_IPV4)) {
    if (a->len != sizeof out.ip) {
      error = "IPv4 address of " + std::to_string(a->len) + " bytes";
      return false;
    }
    std::memcpy(&out.ip, a->data, sizeof out.ip);
    return true;
  }
  if (const nl::Attr* a = t.Get(IPSET_ATTR_IPADDR_IPV6)) {
    if (a->len != sizeof out.in6) {
      error = "IPv6 address of " + std::to_string(a->len) + " bytes";
      return false;
    }
    std::memcpy(&out.in6, a->data, sizeof out.in6);
    return true;
  }
  error = "address nest without an address";
  return false;
}

// Typed reads that name the attribute when its size is wrong.
template <typename T, bool (*Get)(const nl::Attr&, T*)>
bool Read(const nl::AttrTable& t, uint16_t type, T* out, bool* present, std::string& error) {
  const nl::Attr* a = t.Get(type);
  if (!a) return true;
  if (!Get(*a, out)) {
    error = "attribute " + std::to_string(type) + " has " + std::to_string(a->len) + " bytes";
    return false;
  }
  if (present) *present = true;
  return true;
}
#define READ_U8(t, type, out, present) Read<uint8_t, nl::GetU8>(t, type, out, present, error)
#define READ_BE16(t, type, out, present) Read<uint16_t, nl::GetBe16>(t, type, out, present, error)
#define READ_BE32(t, type, out, present) Read<uint32_t, nl::GetBe32>(t, type, out, present, error)
#define READ_BE64(t, type, out, present) Read<uint64_t, nl::GetBe64>(t, type, out, present, error)

// A u32 in the byte order its NLA_F_NET_BYTEORDER flag says: the kernel
// sends the markmask in host order (nla_put_u32), unlike every other number.
bool GetFlaggedU32(const nl::Attr& a, uint32_t* out) {
  return a.flags & NLA_F_NET_BYTEORDER ? nl::GetBe32(a, out) : nl::GetU32(a, out);
}
#define READ_U32_FLAGGED(t, type, out, present) Read<uint32_t, GetFlaggedU32>(t, type, out, present, error)

bool DecodeHeaderData(const nl::Attr& data, Header& h, std::string& error) {
  nl::AttrTable t(data.data, data.len, IPSET_ATTR_CREATE_MAX);
  if (!t.ok()) {
    error = "header data: " + t.error();
    return false;
  }
  if (const nl::Attr* a = t.Get(IPSET_ATTR_IP)) {
    if (!GetAddr(*a, h.range_from, error)) return false;
    h.has_range = true;
  }
  if (const nl::Attr* a = t.Get(IPSET_ATTR_IP_TO))
    if (!GetAddr(*a, h.range_to, error)) return false;
  bool has_port = false;
  if (!READ_U8(t, IPSET_ATTR_CIDR, &h.range_cidr, nullptr) ||
      !READ_BE16(t, IPSET_ATTR_PORT, &h.port_from, &has_port) ||
      !READ_BE16(t, IPSET_ATTR_PORT_TO, &h.port_to, nullptr) ||
      !READ_BE32(t, IPSET_ATTR_TIMEOUT, &h.timeout, &h.has_timeout) ||
      !READ_BE32(t, IPSET_ATTR_CADT_FLAGS, &h.cadt_flags, nullptr) ||
      !READ_U32_FLAGGED(t, IPSET_ATTR_MARKMASK, &h.markmask, &h.has_markmask) ||
      !READ_BE32(t, IPSET_ATTR_HASHSIZE, &h.hashsize, &h.has_hashsize) ||
      !READ_BE32(t, IPSET_ATTR_MAXELEM, &h.maxelem, &h.has_maxelem) ||
      !READ_U8(t, IPSET_ATTR_NETMASK, &h.netmask, &h.has_netmask) ||
      !READ_U8(t, IPSET_ATTR_BUCKETSIZE, &h.bucketsize, &h.has_bucketsize) ||
      !READ_BE32(t, IPSET_ATTR_INITVAL, &h.initval, &h.has_initval) ||
      !READ_BE32(t, IPSET_ATTR_SIZE, &h.size, &h.has_size) ||
      !READ_BE32(t, IPSET_ATTR_ELEMENTS, &h.elements, &h.has_elements) ||
      !READ_BE32(t, IPSET_ATTR_REFERENCES, &h.references, nullptr) ||
      !READ_BE32(t, IPSET_ATTR_MEMSIZE, &h.memsize, nullptr))
    return false;
  if (has_port) h.has_range = true;
  if (const nl::Attr* a = t.Get(IPSET_ATTR_BITMASK)) {
    if (!GetAddr(*a, h.bitmask, error)) return false;
    h.has_bitmask = true;
  }
  return true;
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

bool DecodeProtocol(const nl::Bytes& msg, ProtocolReply& out, std::string& error) {
  const uint8_t* data;
  size_t len;
  if (!Payload(msg, &data, &len, error)) return false;
  nl::AttrTable t(data, len, IPSET_ATTR_CMD_MAX);
  if (!t.ok()) {
    error = t.error();
    return false;
  }
  bool has = false;
  if (!READ_U8(t, IPSET_ATTR_PROTOCOL, &out.version, &has) ||
      !READ_U8(t, IPSET_ATTR_PROTOCOL_MIN, &out.min, nullptr))
    return false;
  if (!has) {
    error = "PROTOCOL reply without IPSET_ATTR_PROTOCOL";
    return false;
  }
  return true;
}

bool DecodeTypeReply(const nl::Bytes& msg, TypeReply& out, std::string& error) {
  const uint8_t* data;
  size_t len;
  if (!Payload(msg, &data, &len, error)) return false;
  nl::AttrTable t(data, len, IPSET_ATTR_CMD_MAX);
  if (!t.ok()) {
    error = t.error();
    return false;
  }
  bool has = false;
  if (!READ_U8(t, IPSET_ATTR_REVISION, &out.revision, &has) ||
      !READ_U8(t, IPSET_ATTR_REVISION_MIN, &out.revision_min, nullptr))
    return false;
  if (!has) {
    error = "TYPE reply without IPSET_ATTR_REVISION";
    return false;
  }
  return true;
}

bool DecodeEntry(const uint8_t* data, size_t len, Entry& e, std::string& error) {
  nl::AttrTable t(data, len, IPSET_ATTR_ADT_MAX);
  if (!t.ok()) {
    error = "element: " + t.error();
    return false;
  }
  e = Entry{};
  if (const nl::Attr* a = t.Get(IPSET_ATTR_IP)) {
    if (!GetAddr(*a, e.ip, error)) return false;
    e.has_ip = true;
  }
  if (const nl::Attr* a = t.Get(IPSET_ATTR_IP_TO)) {
    if (!GetAddr(*a, e.ip_to, error)) return false;
    e.has_ip_to = true;
  }
  if (const nl::Attr* a = t.Get(IPSET_ATTR_IP2)) {
    if (!GetAddr(*a, e.ip2, error)) return false;
    e.has_ip2 = true;
  }
  if (const nl::Attr* a = t.Get(IPSET_ATTR_IP2_TO)) {
    if (!GetAddr(*a, e.ip2_to, error)) return false;
    e.has_ip2_to = true;
  }
  uint32_t cadt = 0;
  uint64_t skbmark = 0;
  if (!READ_U8(t, IPSET_ATTR_CIDR, &e.cidr, &e.has_cidr) ||
      !READ_U8(t, IPSET_ATTR_CIDR2, &e.cidr2, &e.has_cidr2) ||
      !READ_BE32(t, IPSET_ATTR_MARK, &e.mark, &e.has_mark) ||
      !READ_BE16(t, IPSET_ATTR_PORT, &e.port, &e.has_port) ||
      !READ_BE16(t, IPSET_ATTR_PORT_TO, &e.port_to, &e.has_port_to) ||
      !READ_U8(t, IPSET_ATTR_PROTO, &e.proto, &e.has_proto) ||
      !READ_BE32(t, IPSET_ATTR_CADT_FLAGS, &cadt, nullptr) ||
      !READ_BE32(t, IPSET_ATTR_TIMEOUT, &e.timeout, &e.has_timeout) ||
      !READ_BE64(t, IPSET_ATTR_PACKETS, &e.packets, &e.has_packets) ||
      !READ_BE64(t, IPSET_ATTR_BYTES, &e.bytes, &e.has_bytes) ||
      !READ_BE64(t, IPSET_ATTR_SKBMARK, &skbmark, &e.has_skbmark) ||
      !READ_BE32(t, IPSET_ATTR_SKBPRIO, &e.skbprio, &e.has_skbprio) ||
      !READ_BE16(t, IPSET_ATTR_SKBQUEUE, &e.skbqueue, &e.has_skbqueue))
    return false;
  e.skbmark = static_cast<uint32_t>(skbmark >> 32);
  e.skbmarkmask = static_cast<uint32_t>(skbmark);
  e.before = cadt & IPSET_FLAG_BEFORE;
  e.nomatch = cadt & IPSET_FLAG_NOMATCH;
  e.physdev = cadt & IPSET_FLAG_PHYSDEV;
  e.wildcard = cadt & IPSET_FLAG_IFACE_WILDCARD;
  if (const nl::Attr* a = t.Get(IPSET_ATTR_ETHER)) {
    if (a->len != sizeof e.ether) {
      error = "ethernet address of " + std::to_string(a->len) + " bytes";
      return false;
    }
    std::memcpy(e.ether, a->data, sizeof e.ether);
    e.has_ether = true;
  }
  if (const nl::Attr* a = t.Get(IPSET_ATTR_NAME)) e.name = nl::GetString(*a);
  if (const nl::Attr* a = t.Get(IPSET_ATTR_NAMEREF)) e.nameref = nl::GetString(*a);
  if (const nl::Attr* a = t.Get(IPSET_ATTR_IFACE)) e.iface = nl::GetString(*a);
  if (const nl::Attr* a = t.Get(IPSET_ATTR_COMMENT)) {
    e.comment = nl::GetString(*a);
    e.has_comment = true;
  }
  return true;
}

bool ListDecoder::Add(const nl::Bytes& msg, std::string& error) {
  const uint8_t* data;
  size_t len;
  if (!Payload(msg, &data, &len, error)) return false;
  nl::AttrTable t(data, len, IPSET_ATTR_CMD_MAX);
  if (!t.ok()) {
    error = t.error();
    return false;
  }
  const nl::Attr* name_attr = t.Get(IPSET_ATTR_SETNAME);
  if (!name_attr) {
    error = "list message without a set name";
    return false;
  }
  const std::string name = nl::GetString(*name_attr);
  auto it = by_name_.find(name);
  if (it == by_name_.end()) {
    it = by_name_.emplace(name, sets_.size()).first;
    sets_.emplace_back();
    sets_.back().header.name = name;
  }
  ListedSet& set = sets_[it->second];
  Header& h = set.header;
  if (const nl::Attr* a = t.Get(IPSET_ATTR_TYPENAME)) {
    h.type = nl::GetString(*a);
    set.has_header = true;
  }
  if (!READ_U8(t, IPSET_ATTR_FAMILY, &h.family, nullptr) ||
      !READ_U8(t, IPSET_ATTR_REVISION, &h.revision, nullptr) ||
      !READ_BE16(t, IPSET_ATTR_INDEX, &h.index, &h.has_index))
    return false;
  if (const nl::Attr* a = t.Get(IPSET_ATTR_DATA))
    if (!DecodeHeaderData(*a, h, error)) return false;
  const nl::Attr* adt = t.Get(IPSET_ATTR_ADT);
  if (!adt) return true;
  const SetType* type = FindSetType(h.type);
  if (!type) {
    error = "set " + name + " has type '" + h.type + "', which this library does not decode";
    return false;
  }
  nl::AttrReader r(adt->data, adt->len);
  nl::Attr a;
  Entry e;
  while (r.Next(a)) {
    if (a.type != IPSET_ATTR_DATA) continue;
    if (!DecodeEntry(a.data, a.len, e, error)) return false;
    set.entries.emplace_back();
    FormatEntry(e, *type, h.family, set.entries.back());
  }
  if (!r.ok()) {
    error = "element list: " + r.error();
    return false;
  }
  return true;
}

uint32_t EchoedLineno(const nl::Bytes& echo) {
  const uint8_t* data;
  size_t len;
  std::string error;
  if (!Payload(echo, &data, &len, error)) return 0;
  nl::AttrTable t(data, len, IPSET_ATTR_CMD_MAX);
  const nl::Attr* a = t.Get(IPSET_ATTR_LINENO);
  uint32_t v = 0;
  // call_ad() copies the failing element's LINENO into the echo as raw
  // bytes (nla_get_u32 then a plain u32 store, no byte swapping), so it
  // comes back in the byte order we sent it: network order.
  if (!a || !nl::GetBe32(*a, &v)) return 0;
  return v;
}

}  // namespace ipset
