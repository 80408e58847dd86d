// Functions the unit tests call to check the codec without a kernel:
// requests encoded as the socket would send them, and recorded kernel
// messages decoded into the records the client reads.
#pragma once

#include <napi.h>

namespace conntrack {

// conntrackEncode({ op: 'dump' | 'get' | 'delete' | 'flush' | 'statsCpu' | 'stats', filter?, key?, family? }) -> Buffer
// conntrackDecode(messages: Buffer[], filter?) -> { records, strings, errors: string[] }
// conntrackDecodeStats(cpuMessages: Buffer[], globalMessage?: Buffer) -> stats
void RegisterTestEntryPoints(Napi::Env env, Napi::Object exports);

}  // namespace conntrack
