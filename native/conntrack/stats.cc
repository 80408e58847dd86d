#include "stats.h"

namespace conntrack {

namespace {

struct StatName {
  uint16_t type;
  const char* name;
};

// The names the counters take in JavaScript, next to their constants.
// The deprecated ones (searched, new, ignore, delete, deleteList) are kept:
// old kernels still send them.
const StatName kStats[] = {
    {CTA_STATS_SEARCHED, "searched"},     {CTA_STATS_FOUND, "found"},
    {CTA_STATS_NEW, "new"},               {CTA_STATS_INVALID, "invalid"},
    {CTA_STATS_IGNORE, "ignore"},         {CTA_STATS_DELETE, "delete"},
    {CTA_STATS_DELETE_LIST, "deleteList"}, {CTA_STATS_INSERT, "insert"},
    {CTA_STATS_INSERT_FAILED, "insertFailed"}, {CTA_STATS_DROP, "drop"},
    {CTA_STATS_EARLY_DROP, "earlyDrop"},  {CTA_STATS_ERROR, "error"},
    {CTA_STATS_SEARCH_RESTART, "searchRestart"}, {CTA_STATS_CLASH_RESOLVE, "clashResolve"},
    {CTA_STATS_CHAIN_TOOLONG, "chainTooLong"},
};

}  // namespace

Napi::Object StatsToJs(Napi::Env env, const std::vector<CpuStats>& cpus, const GlobalStats& global) {
  Napi::Object o = Napi::Object::New(env);
  Napi::Array list = Napi::Array::New(env, cpus.size());
  for (size_t i = 0; i < cpus.size(); i++) {
    Napi::Object c = Napi::Object::New(env);
    c.Set("cpu", cpus[i].cpu);
    for (const StatName& s : kStats)
      if (cpus[i].present & (1u << s.type)) c.Set(s.name, static_cast<double>(cpus[i].values[s.type]));
    list.Set(static_cast<uint32_t>(i), c);
  }
  o.Set("cpus", list);
  if (global.has_entries) o.Set("entries", static_cast<double>(global.entries));
  if (global.has_max) o.Set("maxEntries", static_cast<double>(global.max_entries));
  return o;
}

Napi::Array StatsNamesToJs(Napi::Env env) {
  Napi::Array a = Napi::Array::New(env);
  for (const StatName& s : kStats) a.Set(a.Length(), s.name);
  return a;
}

}  // namespace conntrack
