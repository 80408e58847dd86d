// The addon's entry point: registers each family's handle class.
#include <malloc.h>
#include <napi.h>

#include "../conntrack/handle.h"
#include "../ipset/handle.h"
#include "../ipvs/handle.h"
#include "../nftables/events.h"
#include "../nftables/handle.h"
#include "../rtnl/handle.h"
#include "large_buffer.h"

namespace {

// Bytes the C/C++ heap has handed out and not taken back (glibc's own
// count: small allocations plus mmapped large ones). Leak tests read this
// instead of the resident set, which moves with page reuse and hides or
// invents megabytes.
Napi::Value MallocInUse(const Napi::CallbackInfo& info) {
  const struct mallinfo2 m = mallinfo2();
  return Napi::Number::New(info.Env(), static_cast<double>(m.uordblks + m.hblkhd));
}

// Hands the C heap's free pages back to the kernel, in every arena:
// glibc keeps what was freed inside an arena (the per-thread ones, where
// the worker threads' request and reply buffers live, above all) until the
// top of that arena is free, so after one big batch a process can hold tens
// of megabytes it no longer uses. Returns whether anything was released.
Napi::Value TrimMalloc(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), malloc_trim(0) != 0);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  ipvs::IpvsHandle::Init(env, exports);
  rtnl::RtnlHandle::Init(env, exports);
  ipset::IpsetHandle::Init(env, exports);
  conntrack::ConntrackHandle::Init(env, exports);
  nft::NftablesHandle::Init(env, exports);
  nft::NftablesEvents::Init(env, exports);
  exports.Set("mallocInUse", Napi::Function::New(env, MallocInUse));
  exports.Set("trimMalloc", Napi::Function::New(env, TrimMalloc));
  exports.Set("largeBuffer", Napi::Function::New(env, addon::NewLargeBuffer));
  return exports;
}

}  // namespace

NODE_API_MODULE(ipvs_netlink, Init)
