// RtnlHandle: the JavaScript-visible object behind `Rtnl`, a Channel on
// NETLINK_ROUTE that runs batches of link and address requests off the
// JavaScript thread.
#pragma once

#include <napi.h>

#include <memory>

#include "../addon/channel.h"

namespace rtnl {

class RtnlHandle : public Napi::ObjectWrap<RtnlHandle> {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  explicit RtnlHandle(const Napi::CallbackInfo& info);
  ~RtnlHandle() override;

 private:
  Napi::Value Open(const Napi::CallbackInfo& info);
  Napi::Value Execute(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Counters(const Napi::CallbackInfo& info);
  Napi::Value ReleaseBuffers(const Napi::CallbackInfo& info);
  Napi::Value TestBufferResidency(const Napi::CallbackInfo& info);

  std::shared_ptr<addon::Channel> channel_;
};

}  // namespace rtnl
