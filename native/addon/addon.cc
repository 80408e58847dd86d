// The addon's entry point: registers each family's handle class.
#include <napi.h>

#include "../ipset/handle.h"
#include "../ipvs/handle.h"
#include "../rtnl/handle.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  ipvs::IpvsHandle::Init(env, exports);
  rtnl::RtnlHandle::Init(env, exports);
  ipset::IpsetHandle::Init(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(ipvs_netlink, Init)
