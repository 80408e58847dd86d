#include "test_entry_points.h"

#include <linux/netlink.h>

#include <cstring>

#include "../addon/js_values.h"
#include "codec.h"
#include "filter.h"
#include "js_bridge.h"
#include "records.h"
#include "stats.h"

namespace conntrack {

namespace {

nl::Bytes BufferBytes(const Napi::Value& v, const std::string& what) {
  if (!v.IsBuffer()) throw Napi::TypeError::New(v.Env(), what + " must be a Buffer");
  auto b = v.As<Napi::Buffer<uint8_t>>();
  return nl::Bytes(b.Data(), b.Data() + b.Length());
}

// The flags the socket adds when it sends the request.
void AsSent(nl::Bytes& b, uint16_t flags) {
  nlmsghdr h;
  std::memcpy(&h, b.data(), sizeof h);
  h.nlmsg_flags |= NLM_F_REQUEST | flags;
  std::memcpy(b.data(), &h, sizeof h);
}

Napi::Value Encode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) throw Napi::TypeError::New(env, "conntrackEncode takes an object");
  Napi::Object o = info[0].As<Napi::Object>();
  const std::string op = addon::GetString(o, "op", "op", 16);
  nl::Bytes b;
  if (op == "dump") {
    b = EncodeDump(FilterFromJs(o.Get("filter")));
    AsSent(b, NLM_F_ACK | NLM_F_DUMP);
  } else if (op == "get") {
    b = EncodeGet(KeyFromJs(o.Get("key"), "key"));
    AsSent(b, NLM_F_ACK);
  } else if (op == "delete") {
    b = EncodeDelete(KeyFromJs(o.Get("key"), "key"));
    AsSent(b, NLM_F_ACK);
  } else if (op == "flush") {
    b = EncodeFlush(static_cast<uint8_t>(addon::GetUint(o, "family", "family", 255)));
    AsSent(b, NLM_F_ACK);
  } else if (op == "statsCpu") {
    b = EncodeStatsCpu();
    AsSent(b, NLM_F_ACK | NLM_F_DUMP);
  } else if (op == "stats") {
    b = EncodeStatsGlobal();
    AsSent(b, NLM_F_ACK);
  } else {
    throw Napi::TypeError::New(env, "unknown op '" + op + "'");
  }
  return Napi::Buffer<uint8_t>::Copy(env, b.data(), b.size());
}

Napi::Value Decode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsArray()) throw Napi::TypeError::New(env, "conntrackDecode takes an array of Buffers");
  Napi::Array msgs = info[0].As<Napi::Array>();
  const Filter filter = info[1].IsObject() ? FilterFromJs(info[1]) : Filter{};
  rec::Writer w;
  Napi::Array errors = Napi::Array::New(env);
  Entry e;
  std::string why;
  for (uint32_t i = 0; i < msgs.Length(); i++) {
    const nl::Bytes m = BufferBytes(msgs.Get(i), "messages[" + std::to_string(i) + "]");
    if (!DecodeEntry(m, e, why)) errors.Set(errors.Length(), why);
    else if (Matches(e, filter)) w.Add(e, i);
  }
  Napi::Object o = w.ToJs(env);
  o.Set("errors", errors);
  return o;
}

Napi::Value DecodeStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array msgs = info[0].As<Napi::Array>();
  std::vector<CpuStats> cpus(msgs.Length());
  std::string why;
  for (uint32_t i = 0; i < msgs.Length(); i++)
    if (!DecodeCpuStats(BufferBytes(msgs.Get(i), "cpu message"), cpus[i], why)) throw Napi::Error::New(env, why);
  GlobalStats global;
  if (info[1].IsBuffer() && !DecodeGlobalStats(BufferBytes(info[1], "global message"), global, why))
    throw Napi::Error::New(env, why);
  return StatsToJs(env, cpus, global);
}

}  // namespace

void RegisterTestEntryPoints(Napi::Env env, Napi::Object exports) {
  exports.Set("conntrackEncode", Napi::Function::New(env, Encode));
  exports.Set("conntrackDecode", Napi::Function::New(env, Decode));
  exports.Set("conntrackDecodeStats", Napi::Function::New(env, DecodeStats));
}

}  // namespace conntrack
