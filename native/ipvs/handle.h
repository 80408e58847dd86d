// IpvsHandle: the JavaScript-visible object behind `Ipvs`. It owns a
// Channel on NETLINK_GENERIC whose every fresh socket resolves the "IPVS"
// family, and runs batches of requests off the JavaScript thread.
#pragma once

#include <napi.h>

#include <atomic>
#include <memory>

#include "../addon/channel.h"

namespace ipvs {

class ArenaSlot;

class IpvsHandle : public Napi::ObjectWrap<IpvsHandle> {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  explicit IpvsHandle(const Napi::CallbackInfo& info);
  ~IpvsHandle() override;

 private:
  Napi::Value Open(const Napi::CallbackInfo& info);
  Napi::Value Execute(const Napi::CallbackInfo& info);
  Napi::Value Dump(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  // The caller has read the last call's records and has no call to make at
  // once: their view is detached, and a big arena let go, now.
  Napi::Value ReleaseReplies(const Napi::CallbackInfo& info);
  Napi::Value Counters(const Napi::CallbackInfo& info);
  Napi::Value ReleaseBuffers(const Napi::CallbackInfo& info);
  Napi::Value TestBufferResidency(const Napi::CallbackInfo& info);
  Napi::Value FamilyId(const Napi::CallbackInfo& info);

  std::shared_ptr<addon::Channel> channel_;
  std::shared_ptr<std::atomic<uint16_t>> family_id_;
  std::shared_ptr<ArenaSlot> arena_;  // reply records, lent to one call at a time
};

// Unit-test entry points: encode request records / decode one message without a socket.
Napi::Value EncodeForTest(const Napi::CallbackInfo& info);
Napi::Value DecodeForTest(const Napi::CallbackInfo& info);

}  // namespace ipvs
