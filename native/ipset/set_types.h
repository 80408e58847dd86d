// The set types this library speaks, and what each element looks like.
#pragma once

#include <string>
#include <string_view>

#include "types.h"

namespace ipset {

// nullptr for a type we do not support.
const SetType* FindSetType(std::string_view name);
// Every supported type, for listings and tests.
const SetType* const* AllSetTypes(size_t* count);

// The IP family value of the request's family header and of the TYPE
// query: libipset always puts NFPROTO_IPV4 in nfgenmsg; the kernel reads
// the set's family from IPSET_ATTR_FAMILY only.
inline uint8_t TypeQueryFamily(const SetType& t) {
  return t.unspec_family ? uint8_t{NFPROTO_UNSPEC} : uint8_t{NFPROTO_IPV4};
}
// The family a set of this type is created with.
inline uint8_t CreateFamily(const SetType& t, uint8_t requested) {
  return t.unspec_family ? uint8_t{NFPROTO_UNSPEC} : requested;
}
// The first option of `used` (bits 1 << Option) that `revision` of the
// type does not have; Option::kCount when it has them all.
Option FirstTooNew(const SetType& t, uint32_t used, uint8_t revision);
// The names of the types that take `o`, for messages ("hash:ip, bitmap:ip").
std::string TypesTaking(Option o);

// Host prefix length for a family.
inline uint8_t HostCidr(uint8_t family) { return family == NFPROTO_IPV6 ? 128 : 32; }

}  // namespace ipset
