#include "set_types.h"

namespace ipset {

namespace {

constexpr uint8_t N = kNever;

// Each type's newest revision this code speaks, and the revision that
// brought each option (the kernel's net/netfilter/ipset/ip_set_*.c revision
// notes, as of Linux 6.18 and ipset 7.21). The handle creates at
// min(kernel's newest, max_revision): never cap below the kernel's newest
// needlessly, since the kernel enables bucketsize and initval only for a
// set created at its newest revision (the type's
// create_flags[IPSET_TYPE_REV_MAX]) and silently ignores them otherwise.
// An option newer than the revision in use is refused before the create is
// sent: an older kernel would ignore it without a word.
//
//            counters comment forceadd skbinfo bucketsize netmask bitmask markmask nomatch wildcard
constexpr SetType kTypes[] = {
    {"hash:ip", Kind::kHash, 1, {Part::kIp}, true, false, 6,
     {1, 2, 3, 4, 5, 0, 6, N, N, N}},
    {"hash:ip,port", Kind::kHash, 2, {Part::kIp, Part::kProtoPort}, true, false, 7,
     {2, 3, 4, 5, 6, 7, 7, N, N, N}},
    {"hash:ip,port,ip", Kind::kHash, 3, {Part::kIp, Part::kProtoPort, Part::kIp2}, true, false, 6,
     {2, 3, 4, 5, 6, N, N, N, N, N}},
    {"hash:ip,port,net", Kind::kHash, 3, {Part::kIp, Part::kProtoPort, Part::kNet2}, true, false, 8,
     {4, 5, 6, 7, 8, N, N, N, 3, N}},
    {"hash:ip,mark", Kind::kHash, 2, {Part::kIp, Part::kMark}, true, false, 3,
     {0, 0, 1, 2, 3, N, N, 0, N, N}},
    {"hash:ip,mac", Kind::kHash, 2, {Part::kIp, Part::kMac}, true, false, 1,
     {0, 0, 0, 0, 1, N, N, N, N, N}},
    {"hash:mac", Kind::kHash, 1, {Part::kMac}, false, true, 1,
     {0, 0, 0, 0, 1, N, N, N, N, N}},
    {"hash:net", Kind::kHash, 1, {Part::kNet}, true, false, 7,
     {3, 4, 5, 6, 7, N, N, N, 2, N}},
    {"hash:net,port", Kind::kHash, 2, {Part::kNet, Part::kProtoPort}, true, false, 8,
     {4, 5, 6, 7, 8, N, N, N, 3, N}},
    {"hash:net,iface", Kind::kHash, 2, {Part::kNet, Part::kIface}, true, false, 8,
     {3, 4, 5, 6, 8, N, N, N, 1, 7}, 0, true},
    {"hash:net,net", Kind::kHash, 2, {Part::kNet, Part::kNet2}, true, false, 4,
     {0, 0, 1, 2, 3, 4, 4, N, 0, N}},
    {"hash:net,port,net", Kind::kHash, 3, {Part::kNet, Part::kProtoPort, Part::kNet2}, true, false, 3,
     {0, 0, 1, 2, 3, N, N, N, 0, N}, 0, true},
    {"bitmap:ip", Kind::kBitmap, 1, {Part::kIp}, false, false, 3,
     {1, 2, N, 3, N, 0, N, N, N, N}},
    {"bitmap:ip,mac", Kind::kBitmap, 2, {Part::kIp, Part::kMac}, false, false, 3,
     {1, 2, N, 3, N, N, N, N, N, N}, 1},
    {"bitmap:port", Kind::kBitmap, 1, {Part::kPort}, false, true, 3,
     {1, 2, N, 3, N, N, N, N, N, N}},
    {"list:set", Kind::kList, 1, {Part::kSetName}, false, true, 3,
     {1, 2, N, 3, N, N, N, N, N, N}},
};

constexpr size_t kCount = sizeof kTypes / sizeof kTypes[0];

constexpr const char* kOptionNames[kOptionCount] = {
    "counters", "comment", "forceadd", "skbinfo", "bucketsize",
    "netmask",  "bitmask", "markmask", "nomatch", "wildcard",
};

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

const char* OptionName(Option o) { return kOptionNames[static_cast<size_t>(o)]; }

Option FirstTooNew(const SetType& t, uint32_t used, uint8_t revision) {
  for (size_t i = 0; i < kOptionCount; i++)
    if ((used >> i & 1) && t.since[i] > revision) return static_cast<Option>(i);
  return Option::kCount;
}

std::string TypesTaking(Option o) {
  std::string out;
  for (const SetType& t : kTypes) {
    if (!t.Takes(o)) continue;
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

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
