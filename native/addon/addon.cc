// The addon's entry point: registers each family's handle class.
#include <malloc.h>
#include <napi.h>

#include "../conntrack/handle.h"
#include "../ipset/handle.h"
#include "../ipvs/handle.h"
#include "../nftables/handle.h"
#include "../rtnl/handle.h"

namespace {

// Bytes the C/C++ heap has handed out and not taken back (glibc's own
// count: small allocations plus mmapped large ones). Leak tests read this
// instead of the resident set, which moves with page reuse and hides or
// invents megabytes.
Napi::Value MallocInUse(const Napi::CallbackInfo& info) {
  const struct mallinfo2 m = mallinfo2();
  return Napi::Number::New(info.Env(), static_cast<double>(m.uordblks + m.hblkhd));
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  ipvs::IpvsHandle::Init(env, exports);
  rtnl::RtnlHandle::Init(env, exports);
  ipset::IpsetHandle::Init(env, exports);
  conntrack::ConntrackHandle::Init(env, exports);
  nft::NftablesHandle::Init(env, exports);
  exports.Set("mallocInUse", Napi::Function::New(env, MallocInUse));
  return exports;
}

}  // namespace

NODE_API_MODULE(ipvs_netlink, Init)
