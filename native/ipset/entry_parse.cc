// Parsing of the element text `ipset restore` reads. The grammar follows
// libipset's parsers (lib/parse.c) for the parts this library supports.
#include <arpa/inet.h>
#include <net/if.h>  // IFNAMSIZ

#include <charconv>
#include <cstring>

#include "entry_text.h"
#include "names.h"
#include "set_types.h"

namespace ipset {

namespace {

// The kernel's timeout limit: IPSET_MAX_TIMEOUT = (UINT_MAX >> 1) / MSEC_PER_SEC
// (kernel-internal, not in uapi). Larger values are refused with -ERANGE.
constexpr uint32_t kMaxTimeout = (0xFFFFFFFFu >> 1) / 1000;

bool Fail(ParseFailure& why, std::string field, std::string message, bool range = false) {
  why.field = std::move(field);
  why.message = std::move(message);
  why.range = range;
  return false;
}

template <typename T>
bool ParseNumber(std::string_view s, T* out, int base = 10) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, *out, base);
  return r.ec == std::errc() && r.ptr == end;
}

bool ParseHex(std::string_view s, uint32_t* out) {
  if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
  return ParseNumber(s.substr(2), out, 16);
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// An address of the set's family.
bool ParseAddress(std::string_view s, uint8_t family, nf_inet_addr& out) {
  char buf[INET6_ADDRSTRLEN + 1];
  if (s.empty() || s.size() >= sizeof buf) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  std::memset(&out, 0, sizeof out);
  return inet_pton(family == NFPROTO_IPV6 ? AF_INET6 : AF_INET, buf, &out) == 1;
}

// ADDR, ADDR/CIDR or ADDR-ADDR. `range_ok` is false where the type takes a
// plain network only.
bool ParseIpPart(std::string_view s, uint8_t family, const char* field, bool range_ok,
                 nf_inet_addr& ip, uint8_t& cidr, bool& has_to, nf_inet_addr& to,
                 ParseFailure& why) {
  const char* fam = family == NFPROTO_IPV6 ? "IPv6" : "IPv4";
  const size_t slash = s.find('/');
  const size_t dash = s.find('-');
  if (slash != std::string_view::npos && dash != std::string_view::npos)
    return Fail(why, field, "cannot be both a range and a CIDR: " + Quote(s));
  if (dash != std::string_view::npos) {
    if (!range_ok) return Fail(why, field, "does not take an address range: " + Quote(s));
    if (!ParseAddress(s.substr(0, dash), family, ip) ||
        !ParseAddress(s.substr(dash + 1), family, to))
      return Fail(why, field, std::string("must be an ") + fam + " address range, got " + Quote(s));
    has_to = true;
    return true;
  }
  std::string_view addr = s.substr(0, slash);
  if (!ParseAddress(addr, family, ip))
    return Fail(why, field, std::string("must be an ") + fam + " address, got " + Quote(s));
  if (slash != std::string_view::npos) {
    unsigned c = 0;
    const unsigned host = HostCidr(family);
    if (!ParseNumber(s.substr(slash + 1), &c))
      return Fail(why, field, "has a prefix length that is not a number: " + Quote(s));
    if (c < 1 || c > host)
      return Fail(why, field, "prefix length must be 1.." + std::to_string(host) + ", got " + Quote(s),
                  true);
    cidr = static_cast<uint8_t>(c);
  }
  return true;
}

// A port number or service name, for protocols with ports.
bool ParsePortNumber(std::string_view s, uint8_t proto, uint16_t* out) {
  unsigned v = 0;
  if (ParseNumber(s, &v)) {
    if (v > 65535) return false;
    *out = static_cast<uint16_t>(v);
    return true;
  }
  return ParseServiceName(s, proto, out);
}

// A number too large is out of range (RangeError); anything else that is
// neither a number nor a service name is of the wrong form (TypeError).
bool IsNumber(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

bool ParsePortRange(std::string_view s, uint8_t proto, Entry& e, ParseFailure& why) {
  const size_t dash = s.find('-');
  if (!ParsePortNumber(s.substr(0, dash), proto, &e.port))
    return Fail(why, "port", "must be a port number 0..65535 or a service name, got " + Quote(s),
                IsNumber(s.substr(0, dash)));
  e.has_port = true;
  if (dash != std::string_view::npos) {
    if (!ParsePortNumber(s.substr(dash + 1), proto, &e.port_to))
      return Fail(why, "port", "must be a port range FROM-TO, got " + Quote(s),
                  IsNumber(s.substr(dash + 1)));
    e.has_port_to = true;
  }
  return true;
}

bool HasPorts(uint8_t proto) {
  return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP ||
         proto == IPPROTO_UDPLITE;
}

// [PROTO:]PORT. Without a protocol the port is TCP, as in libipset.
bool ParseProtoPort(std::string_view s, uint8_t family, Entry& e, ParseFailure& why) {
  const size_t colon = s.find(':');
  std::string_view port = s;
  e.proto = IPPROTO_TCP;
  if (colon != std::string_view::npos) {
    if (!ParseProto(s.substr(0, colon), &e.proto))
      return Fail(why, "proto", "unknown protocol " + Quote(s.substr(0, colon)));
    port = s.substr(colon + 1);
  }
  e.has_proto = true;
  if (HasPorts(e.proto)) return ParsePortRange(port, e.proto, e, why);
  if (e.proto == IPPROTO_ICMP || e.proto == IPPROTO_ICMPV6) {
    const bool v6 = e.proto == IPPROTO_ICMPV6;
    if (v6 != (family == NFPROTO_IPV6))
      return Fail(why, "proto",
                  std::string(v6 ? "icmpv6 needs a set of family inet6"
                                 : "icmp needs a set of family inet"));
    uint16_t tc = 0;
    const size_t slash = port.find('/');
    if (slash != std::string_view::npos) {
      unsigned type = 0, code = 0;
      if (!ParseNumber(port.substr(0, slash), &type) || !ParseNumber(port.substr(slash + 1), &code) ||
          type > 255 || code > 255)
        return Fail(why, "port", "must be an ICMP TYPE/CODE (0..255 each), got " + Quote(port));
      tc = static_cast<uint16_t>(type << 8 | code);
    } else if (!ParseIcmpName(port, v6, &tc)) {
      return Fail(why, "port", "unknown ICMP type name " + Quote(port));
    }
    e.port = tc;
    e.has_port = true;
    return true;
  }
  // Protocols without ports: the kernel stores port 0, so only 0 round-trips.
  if (port != "0")
    return Fail(why, "port", "protocol " + ProtoName(e.proto) + " has no ports: use " +
                                 ProtoName(e.proto) + ":0");
  e.port = 0;
  e.has_port = true;
  return true;
}

bool ValidIfaceName(std::string_view s) {
  if (s.empty() || s.size() >= IFNAMSIZ) return false;
  for (char c : s)
    if (c == '/' || c == '"' || c == '\0' || static_cast<unsigned char>(c) <= ' ') return false;
  return true;
}

bool ParseElement(std::string_view text, const SetType& type, uint8_t family, Entry& e,
                  ParseFailure& why) {
  if (text.empty()) return Fail(why, "entry", "is empty");
  // list:set members are set names, which may themselves contain commas.
  if (type.parts[0] == Part::kSetName) {
    if (text.size() >= IPSET_MAXNAMELEN)
      return Fail(why, "name", "set names are at most " + std::to_string(IPSET_MAXNAMELEN - 1) +
                                   " characters", true);
    // The kernel reads the name up to its first NUL: a member named
    // "a\0b" would silently become "a".
    if (text.find('\0') != std::string_view::npos)
      return Fail(why, "name", "must not contain NUL");
    e.name = std::string(text);
    return true;
  }
  std::string_view parts[3];
  size_t n = 0, at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    if (n == type.dims)
      return Fail(why, "entry", std::string("has more parts than a ") + type.name + " element: " +
                                    Quote(text));
    parts[n++] = text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  if (n != type.dims)
    return Fail(why, "entry", std::string("a ") + type.name + " element has " +
                                  std::to_string(type.dims) + " comma-separated parts, got " +
                                  Quote(text));
  for (size_t i = 0; i < n; i++) {
    std::string_view p = parts[i];
    switch (type.parts[i]) {
      case Part::kIp:
      case Part::kNet:
        if (!ParseIpPart(p, family, "ip", true, e.ip, e.cidr, e.has_ip_to, e.ip_to, why))
          return false;
        e.has_ip = true;
        break;
      case Part::kIp2:
      case Part::kNet2:
        if (!ParseIpPart(p, family, "ip2", true, e.ip2, e.cidr2, e.has_ip2_to, e.ip2_to, why))
          return false;
        e.has_ip2 = true;
        break;
      case Part::kProtoPort:
        if (!ParseProtoPort(p, family, e, why)) return false;
        break;
      case Part::kPort:
        if (!ParsePortRange(p, IPPROTO_TCP, e, why)) return false;
        break;
      case Part::kIface: {
        std::string_view name = p;
        if (name.substr(0, 8) == "physdev:") {
          e.physdev = true;
          name.remove_prefix(8);
        }
        if (!ValidIfaceName(name))
          return Fail(why, "iface", "must be an interface name of 1.." +
                                        std::to_string(IFNAMSIZ - 1) + " characters, got " +
                                        Quote(p));
        e.iface = std::string(name);
        break;
      }
      case Part::kSetName:
        break;  // handled above
    }
  }
  return true;
}

// Splits off the next space-separated word; a word starting with '"' runs
// to the closing quote (comments).
bool NextWord(std::string_view& rest, std::string_view& word, bool& quoted, ParseFailure& why) {
  size_t i = 0;
  while (i < rest.size() && rest[i] == ' ') i++;
  rest.remove_prefix(i);
  if (rest.empty()) return false;
  quoted = rest[0] == '"';
  if (quoted) {
    const size_t close = rest.find('"', 1);
    if (close == std::string_view::npos) {
      Fail(why, "comment", "has no closing quote");
      return false;
    }
    word = rest.substr(1, close - 1);
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest[0] != ' ') {
      Fail(why, "comment", "must be followed by a space");
      return false;
    }
    return true;
  }
  const size_t sp = rest.find(' ');
  word = rest.substr(0, sp);
  rest.remove_prefix(sp == std::string_view::npos ? rest.size() : sp);
  return true;
}

bool ParseOption(std::string_view key, std::string_view& rest, const SetType& type,
                 const OptionSupport& support, Entry& e, ParseFailure& why) {
  std::string_view value;
  bool quoted = false;
  auto need_value = [&](const char* name) {
    if (!NextWord(rest, value, quoted, why)) {
      if (why.field.empty()) Fail(why, name, "needs a value");
      return false;
    }
    return true;
  };
  auto unsupported = [&](const char* name, const char* needs) {
    return Fail(why, name, std::string("is not supported by this set: it was created without ") +
                               needs);
  };
  if (key == "timeout") {
    if (!support.timeout) return unsupported("timeout", "timeout");
    if (!need_value("timeout")) return false;
    if (!ParseNumber(value, &e.timeout) || e.timeout > kMaxTimeout)
      return Fail(why, "timeout", "must be 0.." + std::to_string(kMaxTimeout) + " seconds, got " +
                                      Quote(value), true);
    e.has_timeout = true;
  } else if (key == "nomatch") {
    if (!type.nomatch) return Fail(why, "nomatch", std::string("is not supported by ") + type.name);
    e.nomatch = true;
  } else if (key == "packets" || key == "bytes") {
    const bool packets = key == "packets";
    const char* name = packets ? "packets" : "bytes";
    if (!support.counters) return unsupported(name, "counters");
    if (!need_value(name)) return false;
    uint64_t v = 0;
    if (!ParseNumber(value, &v))
      return Fail(why, name, "must be a non-negative integer, got " + Quote(value), true);
    (packets ? e.packets : e.bytes) = v;
    (packets ? e.has_packets : e.has_bytes) = true;
  } else if (key == "comment") {
    if (!support.comment) return unsupported("comment", "comment");
    if (!need_value("comment")) return false;
    if (value.size() > IPSET_MAX_COMMENT_SIZE)
      return Fail(why, "comment", "is at most " + std::to_string(IPSET_MAX_COMMENT_SIZE) + " bytes",
                  true);
    if (value.find('"') != std::string_view::npos || value.find('\0') != std::string_view::npos)
      return Fail(why, "comment", "must not contain '\"' or NUL (ipset cannot print it back)");
    e.comment = std::string(value);
    e.has_comment = true;
  } else if (key == "skbmark") {
    if (!support.skbinfo) return unsupported("skbmark", "skbinfo");
    if (!need_value("skbmark")) return false;
    const size_t slash = value.find('/');
    e.skbmarkmask = 0xFFFFFFFF;
    if (!ParseHex(value.substr(0, slash), &e.skbmark) ||
        (slash != std::string_view::npos && !ParseHex(value.substr(slash + 1), &e.skbmarkmask)))
      return Fail(why, "skbmark", "must be 0xMARK or 0xMARK/0xMASK (32-bit hex), got " + Quote(value));
    e.has_skbmark = true;
  } else if (key == "skbprio") {
    if (!support.skbinfo) return unsupported("skbprio", "skbinfo");
    if (!need_value("skbprio")) return false;
    const size_t colon = value.find(':');
    uint32_t major = 0, minor = 0;
    if (colon == std::string_view::npos || !ParseNumber(value.substr(0, colon), &major, 16) ||
        !ParseNumber(value.substr(colon + 1), &minor, 16) || major > 0xFFFF || minor > 0xFFFF)
      return Fail(why, "skbprio", "must be MAJOR:MINOR (hex, 16 bits each), got " + Quote(value));
    e.skbprio = major << 16 | minor;
    e.has_skbprio = true;
  } else if (key == "skbqueue") {
    if (!support.skbinfo) return unsupported("skbqueue", "skbinfo");
    if (!need_value("skbqueue")) return false;
    if (!ParseNumber(value, &e.skbqueue))
      return Fail(why, "skbqueue", "must be 0..65535, got " + Quote(value), true);
    e.has_skbqueue = true;
  } else {
    return Fail(why, "option", "unknown option " + Quote(key));
  }
  return true;
}

}  // namespace

bool ParseEntry(std::string_view text, const SetType& type, uint8_t family,
                const OptionSupport& support, Entry& out, ParseFailure& why) {
  out = Entry{};
  std::string_view rest = text;
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.remove_suffix(1);
  const size_t sp = rest.find(' ');
  if (!ParseElement(rest.substr(0, sp), type, family, out, why)) return false;
  rest.remove_prefix(sp == std::string_view::npos ? rest.size() : sp);
  std::string_view key;
  bool quoted = false;
  while (NextWord(rest, key, quoted, why)) {
    if (quoted) return Fail(why, "option", "expected an option name, got a quoted string");
    if (!ParseOption(key, rest, type, support, out, why)) return false;
  }
  return why.field.empty();
}

bool ParseEntries(std::string_view text, const SetType& type, uint8_t family,
                  const OptionSupport& support, std::vector<Entry>& out, size_t& index,
                  ParseFailure& why) {
  out.clear();
  size_t at = 0;
  index = 0;
  while (true) {
    const size_t nl = text.find('\n', at);
    std::string_view line = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    out.emplace_back();
    if (!ParseEntry(line, type, family, support, out.back(), why)) return false;
    if (nl == std::string_view::npos) break;
    at = nl + 1;
    index++;
  }
  return true;
}

}  // namespace ipset
