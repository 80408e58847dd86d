// What the kernel's answers mean. ipset has private error codes (4096 and
// up, from ip_set.h) and type-specific ones (4352 and up) whose meaning
// depends on the set's kind (hash, bitmap, list); plain errnos mean
// different things per command. This turns them into a stable `code` and
// a sentence as clear as the `ipset` tool's own.
#pragma once

#include <string>

#include "types.h"

namespace ipset {

struct ErrorMeaning {
  std::string code;     // "IPSET_ERR_EXIST", "ENOENT", ...
  std::string message;  // what it means for this command
};

// `kind` is the set's kind when known (type-specific codes need it);
// `has_kind` false when the set type is unknown.
ErrorMeaning DescribeError(int err, uint8_t cmd, bool has_kind, Kind kind);

}  // namespace ipset
