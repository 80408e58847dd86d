#include "events.h"

#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include "../addon/js_values.h"
#include "js_bridge.h"

namespace nft {

nl::Status RulesetEvents::Open(const nl::SocketOptions& socket, size_t max_queued, Wake wake,
                               std::unique_ptr<RulesetEvents>& out) {
  std::unique_ptr<RulesetEvents> s(new RulesetEvents(max_queued, std::move(wake)));
  nl::Status st = s->Start(socket, {NFNLGRP_NFTABLES}, "no nf_tables here (load nf_tables)");
  if (st.ok()) out = std::move(s);
  return st;
}

RulesetEvents::RulesetEvents(size_t max_queued, Wake wake)
    : nl::MulticastReader(max_queued, std::move(wake), "nf_tables events") {}

// The reader calls Queued() until it stops: stopped before the queue goes.
RulesetEvents::~RulesetEvents() { Stop(); }

void RulesetEvents::Take(std::vector<RulesetEvent>& out, nl::Status& error) {
  std::lock_guard<std::mutex> g(mu_);
  out.swap(queue_);
  queue_.clear();
  error = Taken();
}

bool RulesetEvents::Queue(const nl::Message& m, std::string& why) {
  if ((m.hdr.nlmsg_type >> 8) != NFNL_SUBSYS_NFTABLES) return true;
  RulesetEvent e;
  e.port_id = m.hdr.nlmsg_pid;
  e.flags = m.hdr.nlmsg_flags;
  const uint8_t type = static_cast<uint8_t>(m.hdr.nlmsg_type & 0xff);
  if (!MessageByType(type)) {
    // A newer kernel's object (a flowtable, say): announced, not decoded.
    e.kind = RulesetEvent::Kind::kUnknown;
    e.msg_type = type;
  } else if (!DecodeMessage(m.payload - NLMSG_HDRLEN, m.hdr.nlmsg_len, e.message, why)) {
    return false;
  }
  queue_.push_back(std::move(e));
  return true;
}

void RulesetEvents::QueueOverrun() {
  RulesetEvent e;
  e.kind = RulesetEvent::Kind::kOverrun;
  queue_.push_back(std::move(e));
}

void NftablesEvents::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("NftablesEvents", DefineClass(env, "NftablesEvents",
                                            {InstanceMethod("open", &NftablesEvents::Open),
                                             InstanceMethod("take", &NftablesEvents::Take),
                                             InstanceMethod("close", &NftablesEvents::Close)}));
}

NftablesEvents::NftablesEvents(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NftablesEvents>(info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject() || !info[1].IsFunction())
    throw Napi::TypeError::New(env, "NftablesEvents takes options and a function");
  Napi::Object o = info[0].As<Napi::Object>();
  const nl::SocketOptions socket = addon::SocketOptionsFromJs(o, NETLINK_NETFILTER);
  const size_t max_queued = addon::GetUint(o, "maxQueued", "maxQueued", 1u << 24, 16384);
  if (max_queued == 0) throw Napi::RangeError::New(env, "maxQueued must be at least 1");
  source_ = std::make_shared<Source>(env, info[1].As<Napi::Function>(), "ipvs-netlink:nftables-events",
                                     [socket, max_queued](nl::MulticastReader::Wake wake, std::unique_ptr<RulesetEvents>& out) {
                                       return RulesetEvents::Open(socket, max_queued, std::move(wake), out);
                                     });
}

NftablesEvents::~NftablesEvents() { source_->Close(); }

Napi::Value NftablesEvents::Open(const Napi::CallbackInfo& info) { return source_->Open(info.Env()); }

Napi::Value NftablesEvents::Take(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::vector<RulesetEvent> events;
  nl::Status error;
  source_->WithStream([&](RulesetEvents& s) { s.Take(events, error); });
  Napi::Array list = Napi::Array::New(env, events.size());
  for (size_t i = 0; i < events.size(); i++) {
    const RulesetEvent& e = events[i];
    Napi::Object o;
    switch (e.kind) {
      case RulesetEvent::Kind::kMessage:
        o = MessageToJs(env, e.message);
        o.Set("portId", e.port_id);
        o.Set("flags", e.flags);
        break;
      case RulesetEvent::Kind::kOverrun:
        o = Napi::Object::New(env);
        o.Set("overrun", true);
        break;
      case RulesetEvent::Kind::kUnknown:
        o = Napi::Object::New(env);
        o.Set("unknown", e.msg_type);
        o.Set("portId", e.port_id);
        break;
    }
    list.Set(static_cast<uint32_t>(i), o);
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("events", list);
  if (!error.ok()) out.Set("error", addon::StatusError(env, error).Value());
  return out;
}

Napi::Value NftablesEvents::Close(const Napi::CallbackInfo& info) {
  source_->Close();
  return info.Env().Undefined();
}

}  // namespace nft
