// The conntrack nfnetlink codec (NFNL_SUBSYS_CTNETLINK): requests to
// bytes, messages to entries. Pure functions of their inputs, checked
// against bytes captured from the `conntrack` tool and fuzzed.
//
// Requests come out as libnetfilter_conntrack builds them: nfgenmsg
// {family, NFNETLINK_V0, 0}, tuples as nested CTA_TUPLE_IP / CTA_TUPLE_PROTO
// with big-endian addresses, ports and ids (no NLA_F_NET_BYTEORDER, as the
// tool sends them), attributes in ascending type order. The socket adds
// NLM_F_REQUEST, NLM_F_ACK and, for dumps, NLM_F_DUMP.
#pragma once

#include <string>
#include <vector>

#include "../netlink/attribute.h"
#include "types.h"

namespace conntrack {

constexpr uint16_t MessageType(uint8_t cmd) {
  return static_cast<uint16_t>(NFNL_SUBSYS_CTNETLINK << 8 | cmd);
}

// IPCTNL_MSG_CT_GET dump of the entries `filter` takes, asking the kernel
// to apply what it applies correctly (see filter.h); the rest is the
// decoder's (Matches).
nl::Bytes EncodeDump(const Filter& filter);
// IPCTNL_MSG_CT_GET of one entry.
nl::Bytes EncodeGet(const Key& key);
// IPCTNL_MSG_CT_DELETE of one entry; appended to `out` (a batch).
void EncodeDelete(const Key& key, nl::Bytes& out);
nl::Bytes EncodeDelete(const Key& key);
// IPCTNL_MSG_CT_DELETE without a tuple: every entry of `family`, or of
// every family for 0. A family flush carries version 1 in nfgenmsg: the
// kernel takes the family into account only then (with NFNETLINK_V0, as
// `conntrack -F -f ipv6` sends it, it empties the whole table).
nl::Bytes EncodeFlush(uint8_t family);
// IPCTNL_MSG_CT_GET_STATS_CPU (a dump) and IPCTNL_MSG_CT_GET_STATS.
nl::Bytes EncodeStatsCpu();
nl::Bytes EncodeStatsGlobal();

// Decodes one conntrack message (a dump part, a get reply or an event)
// into `out`. False with `error` when it is malformed or not an entry.
bool DecodeEntry(const uint8_t* msg, size_t len, Entry& out, std::string& error);
inline bool DecodeEntry(const nl::Bytes& msg, Entry& out, std::string& error) {
  return DecodeEntry(msg.data(), msg.size(), out, error);
}

// One CPU's counters (IPCTNL_MSG_CT_GET_STATS_CPU); values the kernel
// leaves out stay absent (the deprecated ones, or newer ones on old kernels).
struct CpuStats {
  uint16_t cpu = 0;
  uint32_t present = 0;  // bit CTA_STATS_* for each value sent
  uint32_t values[CTA_STATS_MAX + 1] = {};
};
bool DecodeCpuStats(const nl::Bytes& msg, CpuStats& out, std::string& error);

struct GlobalStats {
  bool has_entries = false, has_max = false;
  uint32_t entries = 0, max_entries = 0;
};
bool DecodeGlobalStats(const nl::Bytes& msg, GlobalStats& out, std::string& error);

}  // namespace conntrack
