// ConntrackEvents: the JavaScript side of an EventStream (addon::EventSource).
#include "../addon/js_values.h"
#include "handle.h"
#include "js_bridge.h"

namespace conntrack {

void ConntrackEvents::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("ConntrackEvents", DefineClass(env, "ConntrackEvents",
                                             {InstanceMethod("open", &ConntrackEvents::Open),
                                              InstanceMethod("take", &ConntrackEvents::Take),
                                              InstanceMethod("close", &ConntrackEvents::Close)}));
}

ConntrackEvents::ConntrackEvents(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ConntrackEvents>(info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject() || !info[1].IsFunction())
    throw Napi::TypeError::New(env, "ConntrackEvents takes options and a function");
  Napi::Object o = info[0].As<Napi::Object>();
  EventOptions options;
  options.socket = addon::SocketOptionsFromJs(o, NETLINK_NETFILTER);
  options.groups = addon::GetUint(o, "groups", "groups", 0xffffffffu);
  options.filter = FilterFromJs(o.Get("filter"));
  options.max_queued = addon::GetUint(o, "maxQueued", "maxQueued", 1u << 24, 16384);
  if (options.max_queued == 0) throw Napi::RangeError::New(env, "maxQueued must be at least 1");
  source_ = std::make_shared<Source>(env, info[1].As<Napi::Function>(), "ipvs-netlink:conntrack-events",
                                     [options](nl::MulticastReader::Wake wake, std::unique_ptr<EventStream>& out) {
                                       return EventStream::Open(options, std::move(wake), out);
                                     });
}

ConntrackEvents::~ConntrackEvents() { source_->Close(); }

Napi::Value ConntrackEvents::Open(const Napi::CallbackInfo& info) {
  return source_->Open(info.Env());
}

Napi::Value ConntrackEvents::Take(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  rec::Writer records;
  nl::Status error;
  source_->WithStream([&](EventStream& s) { s.Take(records, error); });
  Napi::Object o = records.ToJs(env);
  if (!error.ok()) o.Set("error", addon::StatusError(env, error).Value());
  return o;
}

Napi::Value ConntrackEvents::Close(const Napi::CallbackInfo& info) {
  source_->Close();
  return info.Env().Undefined();
}

}  // namespace conntrack
