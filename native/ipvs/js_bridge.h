// Moving IPVS batches across N-API: request records in (one copy the worker
// thread owns), results and reply records out. Runs on the JavaScript
// thread only; the records themselves are described in records.h.
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../netlink/socket.h"
#include "batches.h"
#include "records.h"

namespace ipvs {

// Request records as JavaScript wrote them. `data` stays valid while `ref`
// holds the buffer; only the JavaScript thread may create or drop `ref`.
struct RequestBatch {
  Napi::Reference<Napi::Uint8Array> ref;
  const uint8_t* data = nullptr;
  size_t count = 0;
  std::vector<std::string> strings;
};

// (records: Uint8Array, count: number, strings: string[]) starting at
// info[first]. Throws TypeError when the arguments do not fit together.
RequestBatch RequestBatchFromJs(const Napi::CallbackInfo& info, size_t first);

// { failures: [{ index, errno, code, message, text }], records: ArrayBuffer,
//   strings: string[] }. `records` is a view of the writer's arena, not a
// copy; it keeps the arena alive, and must be detached before the arena is
// written again. `strings` holds the writer's strings from `first_string`
// on (those before went to JavaScript with earlier records of a stream).
Napi::Object RepliesToJs(Napi::Env env, const std::vector<Failure>& failures,
                         rec::ReplyWriter& replies, size_t first_string = 0);

// The writer's strings from `first` on, as a JavaScript array.
Napi::Array StringsToJs(Napi::Env env, const std::vector<std::string>& s, size_t first);

}  // namespace ipvs
