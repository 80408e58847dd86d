#include "js_bridge.h"

#include "../addon/js_values.h"

namespace conntrack {

namespace {

using addon::GetUint;
using addon::Has;

int Af(uint8_t family) { return family == NFPROTO_IPV6 ? AF_INET6 : AF_INET; }

uint8_t FamilyFromJs(const Napi::Object& o, const std::string& field, bool required) {
  const uint32_t f = GetUint(o, "family", field + ".family", 255, 0);
  if (f == NFPROTO_IPV4 || f == NFPROTO_IPV6 || (!required && f == 0)) return static_cast<uint8_t>(f);
  throw Napi::TypeError::New(o.Env(), field + ".family must be NFPROTO_IPV4 or NFPROTO_IPV6");
}

Napi::Object ObjectAt(const Napi::Value& v, const std::string& field) {
  if (!v.IsObject()) throw Napi::TypeError::New(v.Env(), field + " must be an object");
  return v.As<Napi::Object>();
}

TupleMatch TupleFromJs(const Napi::Object& o, const std::string& field, uint8_t family) {
  TupleMatch t;
  if (Has(o, "src")) addon::GetAddress(o, "src", field + ".src", Af(family), t.src), t.fields |= field::kSrc;
  if (Has(o, "dst")) addon::GetAddress(o, "dst", field + ".dst", Af(family), t.dst), t.fields |= field::kDst;
  if (Has(o, "srcPort")) t.sport = GetUint(o, "srcPort", field + ".srcPort", 65535), t.fields |= field::kSport;
  if (Has(o, "dstPort")) t.dport = GetUint(o, "dstPort", field + ".dstPort", 65535), t.fields |= field::kDport;
  if (Has(o, "icmpType")) t.icmp_type = GetUint(o, "icmpType", field + ".icmpType", 255), t.fields |= field::kIcmpType;
  if (Has(o, "icmpCode")) t.icmp_code = GetUint(o, "icmpCode", field + ".icmpCode", 255), t.fields |= field::kIcmpCode;
  if (Has(o, "icmpId")) t.icmp_id = GetUint(o, "icmpId", field + ".icmpId", 65535), t.fields |= field::kIcmpId;
  if (Has(o, "zone")) t.zone = GetUint(o, "zone", field + ".zone", 65535), t.fields |= field::kZone;
  if ((t.fields & (field::kSrc | field::kDst)) && family == 0)
    throw Napi::TypeError::New(o.Env(), field + ": an address needs the filter's family");
  return t;
}

}  // namespace

Filter FilterFromJs(const Napi::Value& v) {
  Napi::Object o = ObjectAt(v, "filter");
  Filter f;
  f.family = FamilyFromJs(o, "filter", false);
  if (Has(o, "protocol")) {
    f.has_proto = true;
    f.proto = static_cast<uint8_t>(GetUint(o, "protocol", "filter.protocol", 255));
  }
  if (Has(o, "orig")) f.orig = TupleFromJs(ObjectAt(o.Get("orig"), "filter.orig"), "filter.orig", f.family);
  if (Has(o, "reply")) f.reply = TupleFromJs(ObjectAt(o.Get("reply"), "filter.reply"), "filter.reply", f.family);
  if (Has(o, "zone")) {
    f.has_zone = true;
    f.zone = static_cast<uint16_t>(GetUint(o, "zone", "filter.zone", 65535));
  }
  if (Has(o, "mark")) {
    f.has_mark = true;
    f.mark = GetUint(o, "mark", "filter.mark", 0xffffffffu);
    f.mark_mask = GetUint(o, "markMask", "filter.markMask", 0xffffffffu, 0xffffffffu);
  }
  f.status_mask = GetUint(o, "statusMask", "filter.statusMask", 0xffffffffu);
  f.status_value = GetUint(o, "statusValue", "filter.statusValue", 0xffffffffu) & f.status_mask;
  return f;
}

Key KeyFromJs(const Napi::Value& v, const std::string& field) {
  Napi::Object o = ObjectAt(v, field);
  Key k;
  k.family = FamilyFromJs(o, field, true);
  k.tuple.proto = static_cast<uint8_t>(GetUint(o, "protocol", field + ".protocol", 255));
  k.reply_direction = addon::GetString(o, "direction", field + ".direction", 16, "orig") == "reply";
  const TupleMatch t = TupleFromJs(ObjectAt(o.Get("tuple"), field + ".tuple"), field + ".tuple", k.family);
  if ((t.fields & (field::kSrc | field::kDst)) != (field::kSrc | field::kDst))
    throw Napi::TypeError::New(o.Env(), field + ".tuple needs src and dst");
  k.tuple.src = t.src;
  k.tuple.dst = t.dst;
  k.tuple.has_ports = (t.fields & (field::kSport | field::kDport)) != 0;
  k.tuple.sport = t.sport;
  k.tuple.dport = t.dport;
  k.tuple.has_icmp = (t.fields & (field::kIcmpType | field::kIcmpCode | field::kIcmpId)) != 0;
  k.tuple.icmp_type = t.icmp_type;
  k.tuple.icmp_code = t.icmp_code;
  k.tuple.icmp_id = t.icmp_id;
  k.tuple.has_zone = (t.fields & field::kZone) != 0;
  k.tuple.zone = t.zone;
  if (Has(o, "zone")) {
    k.zone = static_cast<uint16_t>(GetUint(o, "zone", field + ".zone", 65535));
    k.has_zone = k.zone != 0;
  }
  if (Has(o, "id")) {
    k.has_id = true;
    k.id = GetUint(o, "id", field + ".id", 0xffffffffu);
  }
  return k;
}

}  // namespace conntrack
