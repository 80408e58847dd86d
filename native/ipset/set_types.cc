#include "set_types.h"

namespace ipset {

namespace {

// Revisions: Linux 6.1's maxima (net/netfilter/ipset/ip_set_*.c
// IPSET_TYPE_REV_MAX). Newer kernels have higher ones for hash:ip and
// hash:ip,port (bitmask), whose create attributes we do not send; the
// handle uses min(kernel max, these).
constexpr SetType kTypes[] = {
    {"hash:ip", Kind::kHash, 1, {Part::kIp}, true, false, false, 5},
    {"hash:ip,port", Kind::kHash, 2, {Part::kIp, Part::kProtoPort}, true, false, false, 6},
    {"hash:ip,port,ip", Kind::kHash, 3, {Part::kIp, Part::kProtoPort, Part::kIp2}, true, false,
     false, 6},
    {"hash:ip,port,net", Kind::kHash, 3, {Part::kIp, Part::kProtoPort, Part::kNet2}, true, false,
     true, 8},
    {"hash:net", Kind::kHash, 1, {Part::kNet}, true, false, true, 7},
    {"hash:net,port", Kind::kHash, 2, {Part::kNet, Part::kProtoPort}, true, false, true, 8},
    {"hash:net,iface", Kind::kHash, 2, {Part::kNet, Part::kIface}, true, false, true, 8},
    {"bitmap:ip", Kind::kBitmap, 1, {Part::kIp}, false, false, false, 3},
    {"bitmap:port", Kind::kBitmap, 1, {Part::kPort}, false, true, false, 3},
    {"list:set", Kind::kList, 1, {Part::kSetName}, false, true, false, 3},
};

constexpr size_t kCount = sizeof kTypes / sizeof kTypes[0];

const SetType* const* Pointers() {
  static const SetType* ptrs[kCount] = {};
  static bool init = [] {
    for (size_t i = 0; i < kCount; i++) ptrs[i] = &kTypes[i];
    return true;
  }();
  (void)init;
  return ptrs;
}

}  // namespace

const SetType* FindSetType(std::string_view name) {
  for (const SetType& t : kTypes)
    if (name == t.name) return &t;
  return nullptr;
}

const SetType* const* AllSetTypes(size_t* count) {
  *count = kCount;
  return Pointers();
}

}  // namespace ipset
