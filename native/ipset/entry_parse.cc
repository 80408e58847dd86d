// Parsing of the element text `ipset restore` reads: the element's parts
// here, the options after it in entry_options.cc. The grammar follows the
// tool's parsers (libipset lib/parse.c) for every type this library speaks.
#include <arpa/inet.h>
#include <net/if.h>  // IFNAMSIZ

#include <cstring>

#include "entry_text.h"
#include "names.h"
#include "parse_util.h"
#include "set_types.h"

namespace ipset {

bool ParseOptions(std::string_view rest, const SetType& type, const OptionSupport& support,
                  Entry& e, ParseFailure& why);

namespace {

// An address of the set's family. IPv4 in the numbers-and-dots forms the
// tool's resolver takes ("10.0.0.1", "0", "10.1"); never a host name: a
// library does not look names up behind its caller's back.
bool ParseAddress(std::string_view s, uint8_t family, nf_inet_addr& out) {
  char buf[INET6_ADDRSTRLEN + 1];
  if (s.empty() || s.size() >= sizeof buf) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  std::memset(&out, 0, sizeof out);
  if (family == NFPROTO_IPV6) return inet_pton(AF_INET6, buf, &out) == 1;
  in_addr a{};
  if (inet_aton(buf, &a) == 0) return false;
  out.ip = a.s_addr;
  return true;
}

// ADDR, ADDR/CIDR or ADDR-ADDR.
bool ParseIpPart(std::string_view s, const SetType& type, uint8_t family, const char* field,
                 nf_inet_addr& ip, uint8_t& cidr, bool& has_cidr, bool& has_to, nf_inet_addr& to,
                 ParseFailure& why) {
  const char* fam = family == NFPROTO_IPV6 ? "IPv6" : "IPv4";
  const size_t slash = s.find('/');
  const size_t dash = s.find('-');
  if (slash != std::string_view::npos && dash != std::string_view::npos)
    return Fail(why, field, "cannot be both a range and a CIDR: " + Quote(s));
  if (dash != std::string_view::npos) {
    if (!ParseAddress(s.substr(0, dash), family, ip) ||
        !ParseAddress(s.substr(dash + 1), family, to))
      return Fail(why, field, std::string("must be an ") + fam + " address range, got " + Quote(s));
    has_to = true;
    return true;
  }
  if (!ParseAddress(s.substr(0, slash), family, ip))
    return Fail(why, field, std::string("must be an ") + fam + " address, got " + Quote(s));
  if (slash != std::string_view::npos) {
    unsigned c = 0;
    const unsigned host = HostCidr(family);
    // hash:net,iface and hash:net,port,net take /0, matching every address
    // (the kernel refuses it elsewhere, hash:net,net included).
    const unsigned low = type.zero_prefix ? 0 : 1;
    if (!ParseDecimal(s.substr(slash + 1), &c))
      return Fail(why, field, "has a prefix length that is not a number: " + Quote(s));
    if (c < low || c > host)
      return Fail(why, field, "prefix length must be " + std::to_string(low) + ".." +
                                  std::to_string(host) + ", got " + Quote(s), true);
    cidr = static_cast<uint8_t>(c);
    has_cidr = true;
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

bool ParsePortRange(std::string_view s, uint8_t proto, Entry& e, ParseFailure& why) {
  const size_t dash = s.find('-');
  if (!ParsePortNumber(s.substr(0, dash), proto, &e.port))
    return Fail(why, "port", "must be a port number 0..65535 or a service name, got " + Quote(s),
                IsDecimal(s.substr(0, dash)));
  e.has_port = true;
  if (dash != std::string_view::npos) {
    if (!ParsePortNumber(s.substr(dash + 1), proto, &e.port_to))
      return Fail(why, "port", "must be a port range FROM-TO, got " + Quote(s),
                  IsDecimal(s.substr(dash + 1)));
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
      if (!ParseDecimal(port.substr(0, slash), &type) ||
          !ParseDecimal(port.substr(slash + 1), &code) || type > 255 || code > 255)
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

// XX:XX:XX:XX:XX:XX, one or two hex digits each.
bool ParseEther(std::string_view s, uint8_t out[6]) {
  for (int i = 0; i < 6; i++) {
    const size_t colon = s.find(':');
    if ((colon == std::string_view::npos) != (i == 5)) return false;
    const std::string_view part = s.substr(0, colon);
    unsigned v = 0;
    if (part.empty() || part.size() > 2 || !ParseDecimal(part, &v, 16)) return false;
    out[i] = static_cast<uint8_t>(v);
    s.remove_prefix(colon == std::string_view::npos ? s.size() : colon + 1);
  }
  return true;
}

bool ParsePart(std::string_view p, Part part, const SetType& type, uint8_t family, Entry& e,
               ParseFailure& why) {
  switch (part) {
    case Part::kIp:
    case Part::kNet:
      if (!ParseIpPart(p, type, family, "ip", e.ip, e.cidr, e.has_cidr, e.has_ip_to, e.ip_to, why))
        return false;
      e.has_ip = true;
      return true;
    case Part::kIp2:
    case Part::kNet2:
      if (!ParseIpPart(p, type, family, "ip2", e.ip2, e.cidr2, e.has_cidr2, e.has_ip2_to, e.ip2_to,
                       why))
        return false;
      e.has_ip2 = true;
      return true;
    case Part::kProtoPort:
      return ParseProtoPort(p, family, e, why);
    case Part::kPort:
      return ParsePortRange(p, IPPROTO_TCP, e, why);
    case Part::kIface: {
      std::string_view name = p;
      if (name.substr(0, 8) == "physdev:") {
        e.physdev = true;
        name.remove_prefix(8);
      }
      if (!ValidIfaceName(name))
        return Fail(why, "iface", "must be an interface name of 1.." +
                                      std::to_string(IFNAMSIZ - 1) + " characters, got " + Quote(p));
      e.iface = std::string(name);
      return true;
    }
    case Part::kMac:
      if (!ParseEther(p, e.ether))
        return Fail(why, "mac", "must be an ethernet address XX:XX:XX:XX:XX:XX, got " + Quote(p));
      e.has_ether = true;
      return true;
    case Part::kMark:
      if (!ParseNumber(p, &e.mark))
        return Fail(why, "mark", "must be a 32-bit mark (decimal or 0x hex), got " + Quote(p),
                    IsDecimal(p) || p.substr(0, 2) == "0x");
      e.has_mark = true;
      return true;
    case Part::kSetName:
      break;  // ParseElement takes the whole element
  }
  return true;
}

bool ParseElement(std::string_view text, const SetType& type, uint8_t family, Entry& e,
                  ParseFailure& why) {
  if (text.empty()) return Fail(why, "entry", "is empty");
  // list:set members are set names, which may themselves contain commas;
  // "NAME,before,REF" and "NAME,after,REF" are the tool's older way to
  // place a member (what the options before/after do).
  if (type.parts[0] == Part::kSetName) {
    std::string_view name = text, ref;
    const size_t c1 = text.find(',');
    const size_t c2 = c1 == std::string_view::npos ? c1 : text.find(',', c1 + 1);
    if (c2 != std::string_view::npos && text.find(',', c2 + 1) == std::string_view::npos) {
      const std::string_view where = text.substr(c1 + 1, c2 - c1 - 1);
      if (where == "before" || where == "after") {
        name = text.substr(0, c1);
        ref = text.substr(c2 + 1);
        e.before = where == "before";
        if (name.empty()) return Fail(why, "name", "is empty: the member's name comes before ," + std::string(where));
        if (ref.empty()) return Fail(why, std::string(where), "needs a set name after it");
      }
    }
    for (const std::string_view n : {name, ref}) {
      if (n.size() >= IPSET_MAXNAMELEN)
        return Fail(why, "name", "set names are at most " + std::to_string(IPSET_MAXNAMELEN - 1) +
                                     " characters", true);
      // The kernel reads a name up to its first NUL (a member named "a\0b"
      // would silently become "a"), and a line's trailing CR is dropped.
      for (const char c : n)
        if (static_cast<unsigned char>(c) < ' ')
          return Fail(why, "name", "must not contain NUL or other control characters");
    }
    e.name = std::string(name);
    e.nameref = std::string(ref);
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
  if (n + type.optional_parts < type.dims)
    return Fail(why, "entry", std::string("a ") + type.name + " element has " +
                                  std::to_string(type.dims) + " comma-separated parts, got " +
                                  Quote(text));
  for (size_t i = 0; i < n; i++)
    if (!ParsePart(parts[i], type.parts[i], type, family, e, why)) return false;
  return true;
}

}  // namespace

bool ParseEntry(std::string_view text, const SetType& type, uint8_t family,
                const OptionSupport& support, Entry& out, ParseFailure& why) {
  out = Entry{};
  why = ParseFailure{};
  std::string_view rest = text;
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.remove_suffix(1);
  const size_t sp = rest.find(' ');
  if (!ParseElement(rest.substr(0, sp), type, family, out, why)) return false;
  rest.remove_prefix(sp == std::string_view::npos ? rest.size() : sp);
  return ParseOptions(rest, type, support, out, why);
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
