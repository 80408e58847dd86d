#include "records.h"

#include <cstring>
#include <utility>

#include "../addon/js_values.h"

namespace conntrack {
namespace rec {

namespace {

template <typename T>
void Put(uint8_t* at, size_t offset, T v) {
  std::memcpy(at + offset, &v, sizeof v);
}

}  // namespace

uint32_t Writer::String(std::string s) {
  strings_.push_back(std::move(s));
  return static_cast<uint32_t>(strings_.size());
}

void Writer::AddTuple(uint8_t* at, uint8_t family, const Tuple& t) {
  std::memcpy(at + kSrc, &t.src, 16);
  std::memcpy(at + kDst, &t.dst, 16);
  if (family == NFPROTO_IPV6) {
    Put<uint32_t>(at, kSrcText, String(addon::FormatAddress(AF_INET6, &t.src)));
    Put<uint32_t>(at, kDstText, String(addon::FormatAddress(AF_INET6, &t.dst)));
  }
  Put<uint16_t>(at, kSport, t.has_icmp ? t.icmp_id : t.sport);
  Put<uint16_t>(at, kDport, t.dport);
  at[kIcmpType] = t.icmp_type;
  at[kIcmpCode] = t.icmp_code;
  Put<uint16_t>(at, kTupleZone, t.zone);
  at[kTupleFlags] = (t.has_ports ? kHasPorts : 0) | (t.has_icmp ? kHasIcmp : 0) | (t.has_zone ? kHasZone : 0);
  at[kProto] = t.proto;
}

void Writer::Add(const Entry& e, uint32_t index) {
  const size_t base = bytes_.size();
  bytes_.resize(base + kSize, 0);
  uint8_t* at = bytes_.data() + base;
  at[kEvent] = static_cast<uint8_t>(e.event);
  at[kFamily] = e.family;
  at[kState] = e.state;
  using U32 = std::pair<size_t, uint32_t>;
  for (const U32& f : {U32{kPresent, e.present}, U32{kStatus, e.status}, U32{kTimeout, e.timeout},
                       U32{kMark, e.mark}, U32{kId, e.id}, U32{kUse, e.use}, U32{kIndex, index}})
    Put(at, f.first, f.second);
  Put<uint16_t>(at, kZone, e.zone);
  // (String() grows strings_ only: `at` stays valid.)
  if (e.present & present::kHelper) Put<uint32_t>(at, kHelper, String(e.helper));
  AddTuple(at + kOrig, e.family, e.orig);
  AddTuple(at + kReply, e.family, e.reply);
  using U64 = std::pair<size_t, uint64_t>;
  for (const U64& f : {U64{kPacketsOrig, e.packets_orig}, U64{kBytesOrig, e.bytes_orig},
                       U64{kPacketsReply, e.packets_reply}, U64{kBytesReply, e.bytes_reply},
                       U64{kStart, e.start_ns}, U64{kStop, e.stop_ns}})
    Put(at, f.first, f.second);
  std::memcpy(at + kLabels, e.labels, sizeof e.labels);
}

void Writer::AddMarker(uint8_t kind) {
  const size_t base = bytes_.size();
  bytes_.resize(base + kSize, 0);
  bytes_[base + kEvent] = kind;
}

Napi::Object Writer::ToJs(Napi::Env env) const {
  Napi::Object o = Napi::Object::New(env);
  Napi::ArrayBuffer buf = Napi::ArrayBuffer::New(env, bytes_.size());
  if (!bytes_.empty()) std::memcpy(buf.Data(), bytes_.data(), bytes_.size());
  o.Set("records", buf);
  Napi::Array strings = Napi::Array::New(env, strings_.size());
  for (size_t i = 0; i < strings_.size(); i++) strings.Set(static_cast<uint32_t>(i), strings_[i]);
  o.Set("strings", strings);
  return o;
}

Napi::Object LayoutToJs(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
#define FIELD(name) o.Set(#name, static_cast<double>(k##name))
  FIELD(Size); FIELD(Event); FIELD(Family); FIELD(State); FIELD(Present); FIELD(Status);
  FIELD(Timeout); FIELD(Mark); FIELD(Id); FIELD(Use); FIELD(Zone); FIELD(Helper); FIELD(Orig);
  FIELD(Reply); FIELD(PacketsOrig); FIELD(BytesOrig); FIELD(PacketsReply); FIELD(BytesReply);
  FIELD(Start); FIELD(Stop); FIELD(Labels); FIELD(Index); FIELD(TupleSize); FIELD(Src); FIELD(Dst);
  FIELD(SrcText); FIELD(DstText); FIELD(Sport); FIELD(Dport); FIELD(IcmpType); FIELD(IcmpCode);
  FIELD(TupleZone); FIELD(TupleFlags); FIELD(Proto); FIELD(HasPorts); FIELD(HasIcmp); FIELD(HasZone);
#undef FIELD
  return o;
}

}  // namespace rec
}  // namespace conntrack
