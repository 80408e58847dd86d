// Pure functions exposed for unit tests and fuzzing: encode requests and
// decode replies without a socket.
#pragma once

#include <napi.h>

namespace ipset {

// Adds ipsetEncode, ipsetDecodeList, ipsetEchoedLineno, ipsetCanonical and
// ipsetDescribeError to the addon's exports.
void RegisterTestEntryPoints(Napi::Env env, Napi::Object exports);

}  // namespace ipset
