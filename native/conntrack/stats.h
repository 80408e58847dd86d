// The table's counters as JavaScript sees them: one object per CPU with
// the CTA_STATS_* values the kernel sent, named after the constants.
#pragma once

#include <napi.h>

#include <vector>

#include "codec.h"

namespace conntrack {

Napi::Object StatsToJs(Napi::Env env, const std::vector<CpuStats>& cpus, const GlobalStats& global);

// The counter names, in CTA_STATS_* order (for the typed layer).
Napi::Array StatsNamesToJs(Napi::Env env);

}  // namespace conntrack
