#include "handle.h"

#include <linux/netlink.h>

#include "../addon/job.h"
#include "../addon/js_values.h"
#include "jobs.h"
#include "js_bridge.h"
#include "names.h"
#include "records.h"
#include "stats.h"
#include "test_entry_points.h"

namespace conntrack {

namespace {

Napi::Object NamedToJs(Napi::Env env, const Named* t, size_t n) {
  Napi::Object o = Napi::Object::New(env);
  for (size_t i = 0; i < n; i++) o.Set(t[i].name, t[i].value);
  return o;
}

// The numbers and names the TypeScript layer needs, from the uapi headers.
Napi::Object Constants(Napi::Env env) {
  Napi::Object c = Napi::Object::New(env);
#define CT_CONST(name) c.Set(#name, Napi::Number::New(env, name))
  CT_CONST(NFPROTO_IPV4);
  CT_CONST(NFPROTO_IPV6);
  CT_CONST(NFNLGRP_CONNTRACK_NEW);
  CT_CONST(NFNLGRP_CONNTRACK_UPDATE);
  CT_CONST(NFNLGRP_CONNTRACK_DESTROY);
  CT_CONST(IPPROTO_TCP);
  CT_CONST(IPPROTO_UDP);
  CT_CONST(IPPROTO_SCTP);
  CT_CONST(IPPROTO_DCCP);
  CT_CONST(IPPROTO_UDPLITE);
  CT_CONST(IPPROTO_ICMP);
  CT_CONST(IPPROTO_ICMPV6);
#undef CT_CONST
  c.Set("kOverrunRecord", kOverrunRecord);
  size_t n = 0;
  const Named* t = StatusBits(&n);
  c.Set("status", NamedToJs(env, t, n));
  t = Protocols(&n);
  c.Set("protocols", NamedToJs(env, t, n));
  Napi::Object states = Napi::Object::New(env);
  for (uint8_t proto : {static_cast<uint8_t>(IPPROTO_TCP), static_cast<uint8_t>(IPPROTO_SCTP)}) {
    t = States(proto, &n);
    states.Set(static_cast<uint32_t>(proto), NamedToJs(env, t, n));
  }
  c.Set("states", states);
  c.Set("statsNames", StatsNamesToJs(env));
  c.Set("layout", rec::LayoutToJs(env));
  Napi::Object p = Napi::Object::New(env);
#define PRESENT(name, bit) p.Set(name, static_cast<uint32_t>(present::bit))
  PRESENT("status", kStatus); PRESENT("timeout", kTimeout); PRESENT("mark", kMark); PRESENT("id", kId);
  PRESENT("use", kUse); PRESENT("countersOrig", kCountersOrig); PRESENT("countersReply", kCountersReply);
  PRESENT("state", kState); PRESENT("timestamp", kTimestamp); PRESENT("timestampStop", kTimestampStop);
  PRESENT("labels", kLabels); PRESENT("helper", kHelper);
#undef PRESENT
  c.Set("present", p);
  return c;
}

Napi::Value Schedule(const Napi::CallbackInfo& info, std::unique_ptr<addon::Job> job) {
  return addon::Schedule(info.Env(), std::move(job));
}

}  // namespace

void ConntrackHandle::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f = DefineClass(env, "ConntrackHandle",
                                 {InstanceMethod("open", &ConntrackHandle::Open),
                                  InstanceMethod("list", &ConntrackHandle::List),
                                  InstanceMethod("get", &ConntrackHandle::Get),
                                  InstanceMethod("delete", &ConntrackHandle::Delete),
                                  InstanceMethod("deleteMatching", &ConntrackHandle::DeleteMatching),
                                  InstanceMethod("flush", &ConntrackHandle::Flush),
                                  InstanceMethod("stats", &ConntrackHandle::Stats),
                                  InstanceMethod("close", &ConntrackHandle::Close),
                                  InstanceMethod("counters", &ConntrackHandle::Counters),
                                  InstanceMethod("releaseBuffers", &ConntrackHandle::ReleaseBuffers),
                                  InstanceMethod("testBufferResidency", &ConntrackHandle::TestBufferResidency)});
  exports.Set("ConntrackHandle", f);
  exports.Set("conntrackConstants", Constants(env));
  ConntrackEvents::Init(env, exports);
  RegisterTestEntryPoints(env, exports);
}

ConntrackHandle::ConntrackHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ConntrackHandle>(info) {
  channel_ = std::make_shared<addon::Channel>(addon::SocketOptionsFromJs(info[0], NETLINK_NETFILTER), nullptr);
}

ConntrackHandle::~ConntrackHandle() { channel_->Close(); }

Napi::Value ConntrackHandle::Open(const Napi::CallbackInfo& info) {
  return Schedule(info, std::make_unique<addon::OpenJob>(channel_));
}

Napi::Value ConntrackHandle::List(const Napi::CallbackInfo& info) {
  return Schedule(info, MakeListJob(channel_, FilterFromJs(info[0])));
}

Napi::Value ConntrackHandle::Get(const Napi::CallbackInfo& info) {
  return Schedule(info, MakeGetJob(channel_, KeyFromJs(info[0], "key")));
}

Napi::Value ConntrackHandle::Delete(const Napi::CallbackInfo& info) {
  if (!info[0].IsArray()) throw Napi::TypeError::New(info.Env(), "keys must be an array");
  Napi::Array a = info[0].As<Napi::Array>();
  std::vector<Key> keys;
  keys.reserve(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) keys.push_back(KeyFromJs(a.Get(i), "keys[" + std::to_string(i) + "]"));
  return Schedule(info, MakeDeleteJob(channel_, std::move(keys)));
}

Napi::Value ConntrackHandle::DeleteMatching(const Napi::CallbackInfo& info) {
  return Schedule(info, MakeDeleteMatchingJob(channel_, FilterFromJs(info[0])));
}

Napi::Value ConntrackHandle::Flush(const Napi::CallbackInfo& info) {
  const uint32_t family = info[0].IsNumber() ? info[0].As<Napi::Number>().Uint32Value() : 0;
  if (family != 0 && family != NFPROTO_IPV4 && family != NFPROTO_IPV6)
    throw Napi::TypeError::New(info.Env(), "family must be 0, NFPROTO_IPV4 or NFPROTO_IPV6");
  return Schedule(info, MakeFlushJob(channel_, static_cast<uint8_t>(family)));
}

Napi::Value ConntrackHandle::Stats(const Napi::CallbackInfo& info) {
  return Schedule(info, MakeStatsJob(channel_));
}

Napi::Value ConntrackHandle::Close(const Napi::CallbackInfo& info) {
  channel_->Close();
  return info.Env().Undefined();
}

Napi::Value ConntrackHandle::Counters(const Napi::CallbackInfo& info) {
  return addon::CountersToJs(info.Env(), channel_->counters());
}

Napi::Value ConntrackHandle::ReleaseBuffers(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(channel_->ReleaseIdleBuffers()));
}

Napi::Value ConntrackHandle::TestBufferResidency(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(channel_->BufferResidentBytes()));
}

}  // namespace conntrack
