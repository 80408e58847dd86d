// ConntrackHandle: the JavaScript-visible object behind `Conntrack`. It
// owns a Channel on NETLINK_NETFILTER; filters and keys are read on the
// JavaScript thread (so bad input throws before anything is sent) and
// requests run off it. ConntrackEvents is the object behind an event
// stream (event_stream.h).
#pragma once

#include <napi.h>

#include <memory>

#include "../addon/channel.h"
#include "../addon/event_source.h"
#include "event_stream.h"

namespace conntrack {

class ConntrackHandle : public Napi::ObjectWrap<ConntrackHandle> {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  explicit ConntrackHandle(const Napi::CallbackInfo& info);
  ~ConntrackHandle() override;

 private:
  Napi::Value Open(const Napi::CallbackInfo& info);
  Napi::Value List(const Napi::CallbackInfo& info);
  Napi::Value Get(const Napi::CallbackInfo& info);
  Napi::Value Delete(const Napi::CallbackInfo& info);
  Napi::Value DeleteMatching(const Napi::CallbackInfo& info);
  Napi::Value Flush(const Napi::CallbackInfo& info);
  Napi::Value Stats(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Counters(const Napi::CallbackInfo& info);
  Napi::Value ReleaseBuffers(const Napi::CallbackInfo& info);
  Napi::Value TestBufferResidency(const Napi::CallbackInfo& info);

  std::shared_ptr<addon::Channel> channel_;
};

class ConntrackEvents : public Napi::ObjectWrap<ConntrackEvents> {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  // new ConntrackEvents({ netns?, testRcvbuf?, groups, filter, maxQueued }, onReadable)
  explicit ConntrackEvents(const Napi::CallbackInfo& info);
  ~ConntrackEvents() override;

 private:
  Napi::Value Open(const Napi::CallbackInfo& info);
  // { records, strings, error? }: everything read since the last call.
  Napi::Value Take(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);

  using Source = addon::EventSource<EventStream>;
  std::shared_ptr<Source> source_;
};

}  // namespace conntrack
