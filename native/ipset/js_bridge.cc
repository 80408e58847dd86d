#include "js_bridge.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

#include "../addon/js_values.h"
#include "set_types.h"

namespace ipset {

using addon::GetBool;
using addon::GetString;
using addon::GetUint;
using addon::Has;

namespace {

bool ParseU32(std::string_view s, uint32_t* out) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool ParseV4(std::string_view s, nf_inet_addr& out) {
  char buf[INET_ADDRSTRLEN + 1];
  if (s.empty() || s.size() >= sizeof buf) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  std::memset(&out, 0, sizeof out);
  return inet_pton(AF_INET, buf, &out.ip) == 1;
}

// bitmap:ip / bitmap:ip,mac "FROM-TO" or "NET/CIDR" (/0 included: the
// kernel takes any prefix shorter than a host); bitmap:port "FROM-TO".
void RangeFromJs(const Napi::Object& o, CreateSpec& s) {
  Napi::Env env = o.Env();
  const bool is_port = s.type->parts[0] == Part::kPort;
  if (!Has(o, "range"))
    throw Napi::TypeError::New(env, std::string("range is required for ") + s.type->name);
  const std::string r = GetString(o, "range", "range", 100);
  const size_t dash = r.find('-');
  const size_t slash = r.find('/');
  if (is_port) {
    uint32_t a = 0, b = 0;
    if (dash == std::string::npos || !ParseU32(std::string_view(r).substr(0, dash), &a) ||
        !ParseU32(std::string_view(r).substr(dash + 1), &b) || a > 65535 || b > 65535 || a > b)
      throw Napi::RangeError::New(env, "range must be FROM-TO ports (0..65535, FROM <= TO), got '" +
                                           r + "'");
    s.has_port_range = true;
    s.port_from = static_cast<uint16_t>(a);
    s.port_to = static_cast<uint16_t>(b);
    return;
  }
  s.has_ip_range = true;
  if (slash != std::string::npos) {
    uint32_t cidr = 0;
    if (!ParseV4(std::string_view(r).substr(0, slash), s.range_from) ||
        !ParseU32(std::string_view(r).substr(slash + 1), &cidr) || cidr > 31)
      throw Napi::RangeError::New(env, "range must be FROM-TO or NET/CIDR (IPv4, CIDR 0..31), got '" + r + "'");
    s.has_range_cidr = true;
    s.range_cidr = static_cast<uint8_t>(cidr);
    return;
  }
  if (dash == std::string::npos || !ParseV4(std::string_view(r).substr(0, dash), s.range_from) ||
      !ParseV4(std::string_view(r).substr(dash + 1), s.range_to) ||
      ntohl(s.range_from.ip) > ntohl(s.range_to.ip))
    throw Napi::RangeError::New(env, "range must be FROM-TO or NET/CIDR (IPv4), got '" + r + "'");
}

void SetIf(Napi::Object& o, const char* key, bool present, double v) {
  if (present) o.Set(key, Napi::Number::New(o.Env(), v));
}

std::string FormatV4(const nf_inet_addr& a) { return addon::FormatAddress(AF_INET, &a.ip); }

}  // namespace

const SetType& SetTypeFromJs(const Napi::Object& o, const char* key) {
  const std::string name = GetString(o, key, key, 64);
  const SetType* t = FindSetType(name);
  if (!t) throw Napi::TypeError::New(o.Env(), std::string(key) + " '" + name + "' is not a supported set type");
  return *t;
}

uint8_t FamilyFromJs(const Napi::Object& o, const char* key, const SetType& type) {
  const std::string f = GetString(o, key, key, 16, "inet");
  if (f == "inet") return NFPROTO_IPV4;
  if (f == "inet6") {
    if (!type.inet6)
      throw Napi::TypeError::New(o.Env(), std::string(type.name) + " has no family inet6");
    return NFPROTO_IPV6;
  }
  throw Napi::TypeError::New(o.Env(), std::string(key) + " must be 'inet' or 'inet6', got '" + f + "'");
}

std::string SetNameFromJs(const Napi::Object& o, const char* key, const std::string& field,
                          bool optional) {
  if (!Has(o, key)) {
    if (optional) return "";
    throw Napi::TypeError::New(o.Env(), field + " is required");
  }
  std::string s = GetString(o, key, field, IPSET_MAXNAMELEN - 1);
  if (s.empty()) throw Napi::TypeError::New(o.Env(), field + " must not be empty");
  return s;
}

CreateSpec CreateSpecFromJs(const Napi::Object& o) {
  Napi::Env env = o.Env();
  CreateSpec s;
  s.name = SetNameFromJs(o, "name", "name");
  s.type = &SetTypeFromJs(o, "type");
  s.family = FamilyFromJs(o, "family", *s.type);
  const SetType& t = *s.type;
  auto only = [&](const char* key, bool allowed, const std::string& which) {
    if (Has(o, key) && !allowed)
      throw Napi::TypeError::New(env, std::string(key) + " applies to " + which + " sets only, not " +
                                          t.name);
  };
  // An option the type takes at some revision: noted, so the job can check
  // it against the revision the kernel has.
  auto option = [&](const char* key, Option opt) {
    only(key, t.Takes(opt), TypesTaking(opt));
    if (Has(o, key)) s.options |= 1u << static_cast<unsigned>(opt);
  };
  only("hashSize", t.kind == Kind::kHash, "hash:*");
  only("maxElem", t.kind == Kind::kHash, "hash:*");
  only("range", t.kind == Kind::kBitmap, "bitmap:*");
  only("size", t.kind == Kind::kList, "list:set");
  option("bucketSize", Option::kBucketsize);
  option("initval", Option::kBucketsize);
  option("netmask", Option::kNetmask);
  option("bitmask", Option::kBitmask);
  option("markmask", Option::kMarkmask);
  if (Has(o, "netmask") && Has(o, "bitmask"))
    throw Napi::TypeError::New(env, "netmask and bitmask exclude each other: give one");
  const uint32_t host = s.family == NFPROTO_IPV6 ? 128 : 32;
  if (Has(o, "hashSize")) {
    s.has_hashsize = true;
    s.hashsize = GetUint(o, "hashSize", "hashSize", 0xFFFFFFFF);
  }
  if (Has(o, "maxElem")) {
    s.has_maxelem = true;
    s.maxelem = GetUint(o, "maxElem", "maxElem", 0xFFFFFFFF);
  }
  if (Has(o, "timeout")) {
    s.has_timeout = true;
    s.timeout = GetUint(o, "timeout", "timeout", (0xFFFFFFFFu >> 1) / 1000);
  }
  if (Has(o, "size")) {
    s.has_size = true;
    s.size = GetUint(o, "size", "size", 0xFFFFFFFF);
  }
  if (Has(o, "netmask")) {
    s.has_netmask = true;
    s.netmask = static_cast<uint8_t>(GetUint(o, "netmask", "netmask", host));
    if (s.netmask == 0) throw Napi::RangeError::New(env, "netmask must be 1.." + std::to_string(host));
  }
  if (Has(o, "bitmask")) {
    s.has_bitmask = true;
    addon::GetAddress(o, "bitmask", "bitmask", s.family == NFPROTO_IPV6 ? AF_INET6 : AF_INET, s.bitmask);
  }
  if (Has(o, "markmask")) {
    s.has_markmask = true;
    s.markmask = GetUint(o, "markmask", "markmask", 0xFFFFFFFF);
    if (s.markmask == 0) throw Napi::RangeError::New(env, "markmask must not be 0");
  }
  if (Has(o, "bucketSize")) {
    s.has_bucketsize = true;
    s.bucketsize = static_cast<uint8_t>(GetUint(o, "bucketSize", "bucketSize", 255));
    if (s.bucketsize == 0) throw Napi::RangeError::New(env, "bucketSize must be 1..255");
  }
  if (Has(o, "initval")) {
    s.has_initval = true;
    s.initval = GetUint(o, "initval", "initval", 0xFFFFFFFF);
  }
  // Flags: noted when set (false is the kernel's default at any revision).
  auto flag = [&](const char* key, Option opt, uint32_t bit) {
    if (!GetBool(o, key)) return;
    only(key, t.Takes(opt), TypesTaking(opt));
    s.cadt_flags |= bit;
    s.options |= 1u << static_cast<unsigned>(opt);
  };
  flag("forceadd", Option::kForceadd, IPSET_FLAG_WITH_FORCEADD);
  flag("counters", Option::kCounters, IPSET_FLAG_WITH_COUNTERS);
  flag("comment", Option::kComment, IPSET_FLAG_WITH_COMMENT);
  flag("skbinfo", Option::kSkbinfo, IPSET_FLAG_WITH_SKBINFO);
  if (t.kind == Kind::kBitmap) RangeFromJs(o, s);
  return s;
}

OptionSupport OptionSupportFromJs(const Napi::Object& o, const char* key) {
  OptionSupport s;
  if (!Has(o, key)) return s;
  Napi::Object x = addon::GetObject(o, key, key);
  s.timeout = GetBool(x, "timeout", true);
  s.counters = GetBool(x, "counters", true);
  s.comment = GetBool(x, "comment", true);
  s.skbinfo = GetBool(x, "skbinfo", true);
  s.revision = static_cast<uint8_t>(GetUint(x, "revision", "revision", kNever, kNever));
  return s;
}

Napi::Object HeaderToJs(Napi::Env env, const Header& h) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", h.name);
  o.Set("type", h.type);
  o.Set("revision", h.revision);
  if (h.family == NFPROTO_IPV4) o.Set("family", "inet");
  if (h.family == NFPROTO_IPV6) o.Set("family", "inet6");
  SetIf(o, "hashSize", h.has_hashsize, h.hashsize);
  SetIf(o, "maxElem", h.has_maxelem, h.maxelem);
  SetIf(o, "timeout", h.has_timeout, h.timeout);
  SetIf(o, "netmask", h.has_netmask, h.netmask);
  SetIf(o, "size", h.has_size, h.size);
  SetIf(o, "bucketSize", h.has_bucketsize, h.bucketsize);
  if (h.has_initval) o.Set("initval", h.initval);
  if (h.has_markmask) o.Set("markmask", h.markmask);
  if (h.has_bitmask)
    o.Set("bitmask", addon::FormatAddress(h.family == NFPROTO_IPV6 ? AF_INET6 : AF_INET, &h.bitmask));
  if (h.has_range) {
    const SetType* t = FindSetType(h.type);
    if (t && t->parts[0] == Part::kPort) {
      o.Set("range", std::to_string(h.port_from) + "-" + std::to_string(h.port_to));
    } else {
      o.Set("range", FormatV4(h.range_from) + "-" + FormatV4(h.range_to));
    }
  }
  o.Set("counters", Napi::Boolean::New(env, h.cadt_flags & IPSET_FLAG_WITH_COUNTERS));
  o.Set("comment", Napi::Boolean::New(env, h.cadt_flags & IPSET_FLAG_WITH_COMMENT));
  o.Set("skbinfo", Napi::Boolean::New(env, h.cadt_flags & IPSET_FLAG_WITH_SKBINFO));
  o.Set("forceadd", Napi::Boolean::New(env, h.cadt_flags & IPSET_FLAG_WITH_FORCEADD));
  o.Set("references", h.references);
  o.Set("memSize", h.memsize);
  SetIf(o, "elements", h.has_elements, h.elements);
  SetIf(o, "index", h.has_index, h.index);
  return o;
}

Napi::Object ListedSetToJs(Napi::Env env, ListedSet& s) {
  Napi::Object o = HeaderToJs(env, s.header);
  Napi::Array entries = Napi::Array::New(env, s.entries.size());
  for (size_t i = 0; i < s.entries.size(); i++) {
    entries.Set(static_cast<uint32_t>(i), Napi::String::New(env, s.entries[i]));
  }
  o.Set("entries", entries);
  return o;
}

void ThrowEntryError(Napi::Env env, size_t index, std::string_view text, const ParseFailure& why,
                     const std::string& context) {
  std::string shown(text.substr(0, 120));
  const std::string msg = "entry " + std::to_string(index) + " ('" + shown + "'): " + why.field +
                          " " + why.message + (context.empty() ? "" : " (" + context + ")");
  Napi::Error e = why.range ? static_cast<Napi::Error>(Napi::RangeError::New(env, msg))
                            : static_cast<Napi::Error>(Napi::TypeError::New(env, msg));
  // The parts, and the code by the library's rule (lib/util/check.ts).
  e.Set("code", why.range ? "ERR_OUT_OF_RANGE" : "ERR_INVALID_ARG_VALUE");
  e.Set("index", Napi::Number::New(env, static_cast<double>(index)));
  e.Set("entry", Napi::String::New(env, shown));
  e.Set("field", Napi::String::New(env, why.field));
  throw e;
}

}  // namespace ipset
