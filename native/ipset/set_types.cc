#include "set_types.h"

namespace ipset {

namespace {

// Revisions: the newest each type has (net/netfilter/ipset/ip_set_*.c
// IPSET_TYPE_REV_MAX as of Linux 6.18 and ipset 7.17, the same as 6.1's but
// for hash:ip 6 and hash:ip,port 7, which only add the optional bitmask
// attribute we never send). The handle uses min(kernel max, these). Never
// cap below the kernel's maximum needlessly: the kernel enables bucketsize
// and initval only for a set created at its REV_MAX (the type's
// create_flags[IPSET_TYPE_REV_MAX]), and silently ignores them otherwise.
constexpr SetType kTypes[] = {
    {"hash:ip", Kind::kHash, 1, {Part::kIp}, true, false, false, 6},
    {"hash:ip,port", Kind::kHash, 2, {Part::kIp, Part::kProtoPort}, true, false, false, 7},
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
