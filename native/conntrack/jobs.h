// The work a ConntrackHandle schedules. Each job runs off the JavaScript
// thread under the channel's mutex, so one handle's requests never
// interleave on its socket; decoding and filtering happen there too.
#pragma once

#include <memory>
#include <vector>

#include "../addon/channel.h"
#include "../addon/job.h"
#include "types.h"

namespace conntrack {

using ChannelPtr = std::shared_ptr<addon::Channel>;

// A dump of the entries `filter` takes. Resolves { records, strings,
// dumpRetries }; rejects when the conversation broke or the kernel
// refused the dump.
std::unique_ptr<addon::Job> MakeListJob(ChannelPtr ch, Filter filter);

// One entry. Resolves { records, strings } (no record when there is no
// such entry) plus { errno, code, message } of the kernel's answer.
std::unique_ptr<addon::Job> MakeGetJob(ChannelPtr ch, Key key);

// Deletes every key, many per sendmsg. Resolves { deleted, failures:
// [{ index, errno, code, message, text, syscall? }] }: a refused delete
// (ENOENT: already gone) does not stop the others, and a broken
// conversation leaves each unanswered key with its own failure.
std::unique_ptr<addon::Job> MakeDeleteJob(ChannelPtr ch, std::vector<Key> keys);

// Dumps the entries `filter` takes and deletes each one by its tuple, zone
// and id, in one job. Resolves { records, strings, deleted, failures },
// the records being the matched entries (failures index into them).
std::unique_ptr<addon::Job> MakeDeleteMatchingJob(ChannelPtr ch, Filter filter);

// Empties the table, or one family's part of it. Resolves undefined.
std::unique_ptr<addon::Job> MakeFlushJob(ChannelPtr ch, uint8_t family);

// The per-CPU counters and the table's size. Resolves { cpus: [{ cpu,
// found, invalid, ... }], entries?, maxEntries? }.
std::unique_ptr<addon::Job> MakeStatsJob(ChannelPtr ch);

}  // namespace conntrack
