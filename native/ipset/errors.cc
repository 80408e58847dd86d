#include "errors.h"

#include <errno.h>

#include "../addon/errno_name.h"

namespace ipset {

namespace {

#define NAMED(code) #code

ErrorMeaning Generic(int err, uint8_t cmd) {
  switch (err) {
    case IPSET_ERR_PROTOCOL:
      return {NAMED(IPSET_ERR_PROTOCOL),
              "the kernel refused the request as malformed for its ipset protocol"};
    case IPSET_ERR_FIND_TYPE:
      return {NAMED(IPSET_ERR_FIND_TYPE),
              "the kernel does not support this set type (or this revision/family of it)"};
    case IPSET_ERR_MAX_SETS:
      return {NAMED(IPSET_ERR_MAX_SETS), "the kernel's maximum number of sets is reached"};
    case IPSET_ERR_BUSY:
      return {NAMED(IPSET_ERR_BUSY),
              "the set is in use (referenced by a rule or a list:set) and cannot be destroyed"};
    case IPSET_ERR_EXIST_SETNAME2:
      return {NAMED(IPSET_ERR_EXIST_SETNAME2),
              cmd == IPSET_CMD_RENAME ? "a set with the new name already exists"
                                      : "the second set does not exist"};
    case IPSET_ERR_TYPE_MISMATCH:
      return {NAMED(IPSET_ERR_TYPE_MISMATCH),
              "the sets have different types or families and cannot be swapped"};
    case IPSET_ERR_EXIST:
      if (cmd == IPSET_CMD_ADD)
        return {NAMED(IPSET_ERR_EXIST), "the element is already in the set"};
      if (cmd == IPSET_CMD_DEL || cmd == IPSET_CMD_TEST)
        return {NAMED(IPSET_ERR_EXIST), "the element is not in the set"};
      return {NAMED(IPSET_ERR_EXIST), "the set already exists"};
    case IPSET_ERR_INVALID_CIDR:
      return {NAMED(IPSET_ERR_INVALID_CIDR), "the prefix length (CIDR) is invalid for this set"};
    case IPSET_ERR_INVALID_NETMASK:
      return {NAMED(IPSET_ERR_INVALID_NETMASK), "the netmask is invalid"};
    case IPSET_ERR_INVALID_FAMILY:
      return {NAMED(IPSET_ERR_INVALID_FAMILY), "the family is not supported by this set type"};
    case IPSET_ERR_TIMEOUT:
      return {NAMED(IPSET_ERR_TIMEOUT),
              "timeout cannot be used: the set was created without timeout support"};
    case IPSET_ERR_REFERENCED:
      return {NAMED(IPSET_ERR_REFERENCED), "the set is referenced and cannot be renamed or swapped"};
    case IPSET_ERR_IPADDR_IPV4:
      return {NAMED(IPSET_ERR_IPADDR_IPV4), "an IPv4 address was expected"};
    case IPSET_ERR_IPADDR_IPV6:
      return {NAMED(IPSET_ERR_IPADDR_IPV6), "an IPv6 address was expected"};
    case IPSET_ERR_COUNTER:
      return {NAMED(IPSET_ERR_COUNTER),
              "packet/byte counters cannot be used: the set was created without counters"};
    case IPSET_ERR_COMMENT:
      return {NAMED(IPSET_ERR_COMMENT),
              "comments cannot be used: the set was created without comment support"};
    case IPSET_ERR_INVALID_MARKMASK:
      return {NAMED(IPSET_ERR_INVALID_MARKMASK), "the markmask is invalid (it must not be 0)"};
    case IPSET_ERR_SKBINFO:
      return {NAMED(IPSET_ERR_SKBINFO),
              "skbinfo options cannot be used: the set was created without skbinfo"};
    case IPSET_ERR_BITMASK_NETMASK_EXCL:
      return {NAMED(IPSET_ERR_BITMASK_NETMASK_EXCL), "netmask and bitmask exclude each other"};
    default:
      return {"IPSET_ERR_" + std::to_string(err), "ipset error " + std::to_string(err)};
  }
}

ErrorMeaning Hash(int err) {
  switch (err) {
    case IPSET_ERR_HASH_FULL:
      return {NAMED(IPSET_ERR_HASH_FULL), "the set is full: maxelem is reached"};
    case IPSET_ERR_HASH_ELEM:
      return {NAMED(IPSET_ERR_HASH_ELEM), "a zero-valued element cannot be stored"};
    case IPSET_ERR_INVALID_PROTO:
      return {NAMED(IPSET_ERR_INVALID_PROTO), "the protocol is invalid"};
    case IPSET_ERR_MISSING_PROTO:
      return {NAMED(IPSET_ERR_MISSING_PROTO), "a protocol is required"};
    case IPSET_ERR_HASH_RANGE_UNSUPPORTED:
      return {NAMED(IPSET_ERR_HASH_RANGE_UNSUPPORTED),
              "ranges are not supported for this set type or family"};
    case IPSET_ERR_HASH_RANGE:
      return {NAMED(IPSET_ERR_HASH_RANGE), "the range is invalid"};
    default:
      return Generic(err, 0);
  }
}

ErrorMeaning Bitmap(int err) {
  switch (err) {
    case IPSET_ERR_BITMAP_RANGE:
      return {NAMED(IPSET_ERR_BITMAP_RANGE), "the element is outside the range of the set"};
    case IPSET_ERR_BITMAP_RANGE_SIZE:
      return {NAMED(IPSET_ERR_BITMAP_RANGE_SIZE), "the range is too large for a bitmap set"};
    default:
      return Generic(err, 0);
  }
}

ErrorMeaning List(int err) {
  switch (err) {
    case IPSET_ERR_NAME:
      return {NAMED(IPSET_ERR_NAME), "the member set does not exist"};
    case IPSET_ERR_LOOP:
      return {NAMED(IPSET_ERR_LOOP), "a list:set cannot contain another list:set"};
    case IPSET_ERR_BEFORE:
      return {NAMED(IPSET_ERR_BEFORE), "the reference set for before/after is missing"};
    case IPSET_ERR_NAMEREF:
      return {NAMED(IPSET_ERR_NAMEREF), "the reference set does not exist"};
    case IPSET_ERR_LIST_FULL:
      return {NAMED(IPSET_ERR_LIST_FULL), "the list is full: its size is reached"};
    case IPSET_ERR_REF_EXIST:
      return {NAMED(IPSET_ERR_REF_EXIST), "the reference set is not in the list"};
    default:
      return Generic(err, 0);
  }
}

ErrorMeaning Plain(int err, uint8_t cmd) {
  ErrorMeaning m{addon::ErrnoName(err), addon::ErrnoText(err)};
  switch (err) {
    case ENOENT:
      m.message = "the set does not exist";
      break;
    case EEXIST:
      if (cmd == IPSET_CMD_CREATE)
        m.message = "a set with this name already exists (with other settings, or exist was not set)";
      break;
    case EBUSY:
      m.message = "the set is busy: it is being listed or is in use";
      break;
    case ERANGE:
      m.message = "a value is out of range (timeout too large, or a range too large to add)";
      break;
    case EOPNOTSUPP:
      if (cmd == IPSET_CMD_CREATE)
        m.message = "the kernel's revision of this set type lacks an option given";
      break;
    default:
      break;
  }
  return m;
}

}  // namespace

ErrorMeaning DescribeError(int err, uint8_t cmd, bool has_kind, Kind kind) {
  if (err < IPSET_ERR_PRIVATE) return Plain(err, cmd);
  if (err < IPSET_ERR_TYPE_SPECIFIC) return Generic(err, cmd);
  if (!has_kind)
    return {"IPSET_ERR_TYPE_SPECIFIC_" + std::to_string(err - IPSET_ERR_TYPE_SPECIFIC),
            "set-type specific error " + std::to_string(err)};
  switch (kind) {
    case Kind::kHash:
      return Hash(err);
    case Kind::kBitmap:
      return Bitmap(err);
    case Kind::kList:
      return List(err);
  }
  return Generic(err, cmd);
}

}  // namespace ipset
