// IpsetHandle: the JavaScript-visible object behind `Ipset`. It owns a
// Channel on NETLINK_NETFILTER whose every fresh socket negotiates the
// ipset protocol, parses entries on the JavaScript thread (so bad input
// throws before anything is sent) and runs requests off it.
#pragma once

#include <napi.h>

#include <memory>

#include "jobs.h"

namespace ipset {

class IpsetHandle : public Napi::ObjectWrap<IpsetHandle> {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  explicit IpsetHandle(const Napi::CallbackInfo& info);
  ~IpsetHandle() override;

 private:
  Napi::Value Open(const Napi::CallbackInfo& info);
  Napi::Value Protocol(const Napi::CallbackInfo& info);
  Napi::Value Command(const Napi::CallbackInfo& info);
  Napi::Value List(const Napi::CallbackInfo& info);
  Napi::Value Elements(const Napi::CallbackInfo& info);
  // Parses entries as elements() does and sends nothing (replace() checks
  // its entries before it creates the temporary set).
  Napi::Value Check(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Counters(const Napi::CallbackInfo& info);
  Napi::Value ReleaseBuffers(const Napi::CallbackInfo& info);
  Napi::Value TestBufferResidency(const Napi::CallbackInfo& info);

  Shared shared_;
};

}  // namespace ipset
