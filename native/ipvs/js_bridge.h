// Conversion between the plain objects of the TypeScript layer and the IPVS
// structs. Runs on the JavaScript thread only.
#pragma once

#include <napi.h>

#include "types.h"

namespace ipvs {

// { cmd, service?, serviceKeyOnly?, destination?, destinationKeyOnly?,
//   daemon?, timeouts?, dump? } -> Request. Throws TypeError/RangeError.
Request RequestFromJs(const Napi::Object& op);

Napi::Object ServiceToJs(Napi::Env env, const Service& s);
Napi::Object DestinationToJs(Napi::Env env, const Destination& d, uint16_t default_af);
Napi::Object DaemonToJs(Napi::Env env, const Daemon& d);
// The parts of a reply that are present, as { services?, destinations?, ... }.
void ReplyToJs(Napi::Env env, const Reply& r, uint16_t default_af, Napi::Object& out);

}  // namespace ipvs
