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

// bitmap:ip "FROM-TO" or "NET/CIDR"; bitmap:port "FROM-TO".
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
        !ParseU32(std::string_view(r).substr(slash + 1), &cidr) || cidr < 1 || cidr > 32)
      throw Napi::RangeError::New(env, "range must be FROM-TO or NET/CIDR (IPv4), got '" + r + "'");
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
  const Kind kind = s.type->kind;
  auto only = [&](const char* key, bool allowed, const char* which) {
    if (Has(o, key) && !allowed)
      throw Napi::TypeError::New(env, std::string(key) + " applies to " + which + " sets only, not " +
                                          s.type->name);
  };
  only("hashSize", kind == Kind::kHash, "hash:*");
  only("maxElem", kind == Kind::kHash, "hash:*");
  only("forceadd", kind == Kind::kHash, "hash:*");
  only("bucketSize", kind == Kind::kHash, "hash:*");
  only("initval", kind == Kind::kHash, "hash:*");
  only("range", kind == Kind::kBitmap, "bitmap:*");
  only("size", kind == Kind::kList, "list:set");
  only("netmask", std::strcmp(s.type->name, "hash:ip") == 0 ||
                      std::strcmp(s.type->name, "bitmap:ip") == 0,
       "hash:ip and bitmap:ip");
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
    const uint32_t host = s.family == NFPROTO_IPV6 ? 128 : 32;
    s.netmask = static_cast<uint8_t>(GetUint(o, "netmask", "netmask", host));
    if (s.netmask == 0) throw Napi::RangeError::New(env, "netmask must be 1.." + std::to_string(host));
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
  if (GetBool(o, "forceadd")) s.cadt_flags |= IPSET_FLAG_WITH_FORCEADD;
  if (GetBool(o, "counters")) s.cadt_flags |= IPSET_FLAG_WITH_COUNTERS;
  if (GetBool(o, "comment")) s.cadt_flags |= IPSET_FLAG_WITH_COMMENT;
  if (GetBool(o, "skbinfo")) s.cadt_flags |= IPSET_FLAG_WITH_SKBINFO;
  if (kind == Kind::kBitmap) RangeFromJs(o, s);
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

void ThrowEntryError(Napi::Env env, size_t index, std::string_view text, const ParseFailure& why) {
  std::string shown(text.substr(0, 120));
  const std::string msg = "entry " + std::to_string(index) + " ('" + shown + "'): " + why.field +
                          " " + why.message;
  Napi::Error e = why.range ? static_cast<Napi::Error>(Napi::RangeError::New(env, msg))
                            : static_cast<Napi::Error>(Napi::TypeError::New(env, msg));
  e.Set("index", Napi::Number::New(env, static_cast<double>(index)));
  e.Set("field", Napi::String::New(env, why.field));
  throw e;
}

}  // namespace ipset
