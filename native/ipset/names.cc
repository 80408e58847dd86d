#include "names.h"

#include <netdb.h>
#include <netinet/in.h>
#include <strings.h>

#include <cstring>

#include <mutex>
#include <vector>

namespace ipset {

namespace {

struct IcmpNameEntry {
  const char* name;
  uint8_t type, code;
};

// libipset lib/icmp.c and lib/icmpv6.c: the first name of a type/code pair
// is the one printed; later ones are accepted aliases.
constexpr IcmpNameEntry kIcmp[] = {
    {"echo-reply", 0, 0},
    {"pong", 0, 0},
    {"network-unreachable", 3, 0},
    {"host-unreachable", 3, 1},
    {"protocol-unreachable", 3, 2},
    {"port-unreachable", 3, 3},
    {"fragmentation-needed", 3, 4},
    {"source-route-failed", 3, 5},
    {"network-unknown", 3, 6},
    {"host-unknown", 3, 7},
    {"network-prohibited", 3, 9},
    {"host-prohibited", 3, 10},
    {"TOS-network-unreachable", 3, 11},
    {"TOS-host-unreachable", 3, 12},
    {"communication-prohibited", 3, 13},
    {"host-precedence-violation", 3, 14},
    {"precedence-cutoff", 3, 15},
    {"source-quench", 4, 0},
    {"network-redirect", 5, 0},
    {"host-redirect", 5, 1},
    {"TOS-network-redirect", 5, 2},
    {"TOS-host-redirect", 5, 3},
    {"echo-request", 8, 0},
    {"ping", 8, 0},
    {"router-advertisement", 9, 0},
    {"router-solicitation", 10, 0},
    {"ttl-zero-during-transit", 11, 0},
    {"ttl-zero-during-reassembly", 11, 1},
    {"ip-header-bad", 12, 0},
    {"required-option-missing", 12, 1},
    {"timestamp-request", 13, 0},
    {"timestamp-reply", 14, 0},
    {"address-mask-request", 17, 0},
    {"address-mask-reply", 18, 0},
};

constexpr IcmpNameEntry kIcmpv6[] = {
    {"no-route", 1, 0},
    {"communication-prohibited", 1, 1},
    {"address-unreachable", 1, 3},
    {"port-unreachable", 1, 4},
    {"packet-too-big", 2, 0},
    {"ttl-zero-during-transit", 3, 0},
    {"ttl-zero-during-reassembly", 3, 1},
    {"bad-header", 4, 0},
    {"unknown-header-type", 4, 1},
    {"unknown-option", 4, 2},
    {"echo-request", 128, 0},
    {"ping", 128, 0},
    {"echo-reply", 129, 0},
    {"pong", 129, 0},
    {"router-solicitation", 133, 0},
    {"router-advertisement", 134, 0},
    {"neighbour-solicitation", 135, 0},
    {"neigbour-solicitation", 135, 0},
    {"neighbour-advertisement", 136, 0},
    {"neigbour-advertisement", 136, 0},
    {"redirect", 137, 0},
};

template <size_t N>
const char* Lookup(const IcmpNameEntry (&table)[N], uint8_t type, uint8_t code) {
  for (const IcmpNameEntry& e : table)
    if (e.type == type && e.code == code) return e.name;
  return nullptr;
}

template <size_t N>
bool Find(const IcmpNameEntry (&table)[N], std::string_view s, uint16_t* out) {
  for (const IcmpNameEntry& e : table) {
    if (s.size() == strlen(e.name) && strncasecmp(e.name, s.data(), s.size()) == 0) {
      *out = static_cast<uint16_t>(e.type << 8 | e.code);
      return true;
    }
  }
  return false;
}

// The protocol database read once: formatting 100k entries must not query
// it per entry, and getprotobynumber is not thread-safe.
const std::vector<std::string>& ProtoNames() {
  static std::vector<std::string> names;
  static std::once_flag once;
  std::call_once(once, [] {
    names.resize(256);
    char buf[4096];
    for (int p = 0; p < 256; p++) {
      protoent pe, *res = nullptr;
      if (getprotobynumber_r(p, &pe, buf, sizeof buf, &res) == 0 && res && res->p_name)
        names[p] = res->p_name;
      else
        names[p] = std::to_string(p);
    }
  });
  return names;
}

}  // namespace

const std::string& ProtoName(uint8_t proto) { return ProtoNames()[proto]; }

bool ParseProto(std::string_view s, uint8_t* out) {
  if (s.empty() || s.size() > 64) return false;
  bool digits = true;
  for (char c : s) digits = digits && c >= '0' && c <= '9';
  if (digits) {
    if (s.size() > 3) return false;
    unsigned v = 0;
    for (char c : s) v = v * 10 + (c - '0');
    if (v == 0 || v > 255) return false;
    *out = static_cast<uint8_t>(v);
    return true;
  }
  std::string name(s);
  if (strcasecmp(name.c_str(), "icmpv6") == 0) {
    *out = IPPROTO_ICMPV6;
    return true;
  }
  // Case-insensitive match against the names the database prints.
  const std::vector<std::string>& names = ProtoNames();
  for (int p = 1; p < 256; p++) {
    if (strcasecmp(names[p].c_str(), name.c_str()) == 0) {
      *out = static_cast<uint8_t>(p);
      return true;
    }
  }
  char buf[4096];
  protoent pe, *res = nullptr;
  if (getprotobyname_r(name.c_str(), &pe, buf, sizeof buf, &res) == 0 && res &&
      res->p_proto > 0 && res->p_proto < 256) {
    *out = static_cast<uint8_t>(res->p_proto);
    return true;
  }
  return false;
}

const char* IcmpName(uint8_t type, uint8_t code) { return Lookup(kIcmp, type, code); }
const char* Icmpv6Name(uint8_t type, uint8_t code) { return Lookup(kIcmpv6, type, code); }

bool ParseIcmpName(std::string_view s, bool v6, uint16_t* typecode) {
  return v6 ? Find(kIcmpv6, s, typecode) : Find(kIcmp, s, typecode);
}

bool ParseServiceName(std::string_view s, uint8_t proto, uint16_t* port) {
  if (s.empty() || s.size() > 64) return false;
  std::string name(s);
  const std::string& pname = ProtoName(proto);
  char buf[4096];
  servent se, *res = nullptr;
  if (getservbyname_r(name.c_str(), pname.c_str(), &se, buf, sizeof buf, &res) != 0 || !res)
    return false;
  *port = ntohs(static_cast<uint16_t>(res->s_port));
  return true;
}

}  // namespace ipset
