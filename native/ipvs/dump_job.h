// dump(): every service with its destinations in one job, its records
// optionally handed to JavaScript in chunks while the kernel is still
// answering (see dump_job.cc).
#pragma once

#include <napi.h>

#include <memory>

#include "../addon/channel.h"
#include "../addon/job.h"
#include "arena.h"

namespace ipvs {

// `on_chunk`: a function called on the JavaScript thread with (records,
// strings) for each chunk of finished records, or undefined for every
// record in the job's result.
std::unique_ptr<addon::Job> MakeDumpJob(Napi::Env env, std::shared_ptr<addon::Channel> ch, FamilyIdRef id,
                                        std::shared_ptr<ArenaSlot> slot, Napi::Value on_chunk);

}  // namespace ipvs
