// The addon's entry point: registers each family's handle class.
#include <napi.h>

#include "../ipvs/handle.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  ipvs::IpvsHandle::Init(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(ipvs_netlink, Init)
