// Replies to structs (see codec.h; the requests are built in
// requests.cc): the PROTOCOL and TYPE answers, LIST/SAVE dumps merged per
// set (elements formatted as `ipset save` prints them), and the LINENO the
// kernel writes into an echoed request.
#include <endian.h>
#include <linux/netlink.h>

#include <cstring>

#include "codec.h"
#include "entry_text.h"
#include "set_types.h"

namespace ipset {

namespace {

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

namespace {

// A reply whose one required u8 (and optional second) is all it says:
// PROTOCOL (version, minimum) and TYPE (revision, minimum).
bool DecodeU8Pair(const nl::Bytes& msg, uint16_t first, uint16_t second, uint8_t* a, uint8_t* b,
                  const char* missing, std::string& error) {
  const uint8_t* data;
  size_t len;
  if (!Payload(msg, &data, &len, error)) return false;
  nl::AttrTable t(data, len, IPSET_ATTR_CMD_MAX);
  if (!t.ok()) {
    error = t.error();
    return false;
  }
  bool has = false;
  if (!READ_U8(t, first, a, &has) || !READ_U8(t, second, b, nullptr)) return false;
  if (!has) {
    error = missing;
    return false;
  }
  return true;
}

}  // namespace

bool DecodeProtocol(const nl::Bytes& msg, ProtocolReply& out, std::string& error) {
  return DecodeU8Pair(msg, IPSET_ATTR_PROTOCOL, IPSET_ATTR_PROTOCOL_MIN, &out.version, &out.min,
                      "PROTOCOL reply without IPSET_ATTR_PROTOCOL", error);
}

bool DecodeTypeReply(const nl::Bytes& msg, TypeReply& out, std::string& error) {
  return DecodeU8Pair(msg, IPSET_ATTR_REVISION, IPSET_ATTR_REVISION_MIN, &out.revision,
                      &out.revision_min, "TYPE reply without IPSET_ATTR_REVISION", error);
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
