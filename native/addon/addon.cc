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

// Fixes glibc's mmap and trim thresholds at `bytes` for the rest of the
// process. By default glibc raises its mmap threshold to the size of each
// big block freed (up to 32 MiB) and its trim threshold to twice that; from
// then on big blocks come from the arenas, and a per-thread arena gives its
// free top back only past that trim threshold, never on malloc_trim. A
// worker thread that once decoded a big dump then keeps megabytes resident
// for good, four threads over. A fixed threshold turns that adjustment off:
// big blocks are mapped and unmapped on their own, and arenas trim their
// top past `bytes`. Returns whether glibc took both.
Napi::Value PinMallocThresholds(const Napi::CallbackInfo& info) {
  const int bytes = info[0].As<Napi::Number>().Int32Value();
  const bool mmap_set = mallopt(M_MMAP_THRESHOLD, bytes) == 1;
  const bool trim_set = mallopt(M_TRIM_THRESHOLD, bytes) == 1;
  return Napi::Boolean::New(info.Env(), mmap_set && trim_set);
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
  exports.Set("pinMallocThresholds", Napi::Function::New(env, PinMallocThresholds));
  exports.Set("largeBuffer", Napi::Function::New(env, addon::NewLargeBuffer));
  return exports;
}

}  // namespace

NODE_API_MODULE(ipvs_netlink, Init)
