// Fixed-layout records that carry IPVS requests and replies across the
// N-API boundary, a whole batch in one buffer.
//
// Why: reading ~25 properties per operation through N-API, and building
// ~25 per destination back, cost more than the kernel's own work (about
// 13 us per op on the host against ~5 us of kernel time). The TypeScript
// layer validates each operation straight into a 96-byte request record;
// the worker thread turns records into Requests. Replies come back as
// 160-byte records that TypeScript reads with a DataView. This header is
// the only definition of the layout: the offsets are exported to
// TypeScript at load time (RecordLayout), never retyped there.
//
// All fields are in host byte order, naturally aligned. Addresses take 16
// bytes (an IPv4 address in the first 4), as in union nf_inet_addr.
#pragma once

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "types.h"

namespace ipvs {
namespace rec {

// ---- Requests (TypeScript -> native) --------------------------------------

constexpr size_t kRequestSize = 96;

// Request flags (byte 1).
constexpr uint8_t kHasService = 1 << 0;
constexpr uint8_t kServiceKeyOnly = 1 << 1;  // send only the identity
constexpr uint8_t kHasDest = 1 << 2;
constexpr uint8_t kDestKeyOnly = 1 << 3;     // send only address and port
constexpr uint8_t kDump = 1 << 4;
constexpr uint8_t kDestHasAf = 1 << 5;       // send IPVS_DEST_ATTR_ADDR_FAMILY
constexpr uint8_t kHasTimeouts = 1 << 6;
constexpr uint8_t kHasDaemon = 1 << 7;

// String fields hold an index + 1 into the batch's string table; 0 = none.
namespace req {
constexpr size_t kCmd = 0;           // u8, IPVS_CMD_*
constexpr size_t kFlags = 1;         // u8
constexpr size_t kSvcAf = 2;         // u16
constexpr size_t kSvcProtocol = 4;   // u16
constexpr size_t kSvcPort = 6;       // u16
constexpr size_t kSvcFwmark = 8;     // u32
constexpr size_t kSvcAddr = 12;      // 16 bytes
constexpr size_t kSvcFlags = 28;     // u32
constexpr size_t kSvcMask = 32;      // u32
constexpr size_t kSvcTimeout = 36;   // u32
constexpr size_t kSvcNetmask = 40;   // u32, the kernel's word: IPv4 mask in network order, IPv6 prefix
constexpr size_t kSvcSched = 44;     // u16 string
constexpr size_t kSvcPe = 46;        // u16 string
constexpr size_t kDestAf = 48;       // u16
constexpr size_t kDestPort = 50;     // u16
constexpr size_t kDestAddr = 52;     // 16 bytes
constexpr size_t kDestFwd = 68;      // u32
constexpr size_t kDestWeight = 72;   // u32
constexpr size_t kDestUThresh = 76;  // u32
constexpr size_t kDestLThresh = 80;  // u32
constexpr size_t kDestTunType = 84;  // u8
constexpr size_t kDestTunPort = 86;  // u16
constexpr size_t kDestTunFlags = 88; // u16
// SET_CONFIG reuses the destination area.
constexpr size_t kTimeoutTcp = 48;    // u32
constexpr size_t kTimeoutTcpFin = 52; // u32
constexpr size_t kTimeoutUdp = 56;    // u32
// NEW_DAEMON / DEL_DAEMON reuse the destination area.
constexpr size_t kDaemonState = 48;       // u32
constexpr size_t kDaemonGroup = 52;       // 16 bytes
constexpr size_t kDaemonSyncId = 68;      // u32
constexpr size_t kDaemonIfn = 72;         // u16 string
constexpr size_t kDaemonMaxlen = 74;      // u16
constexpr size_t kDaemonPort = 76;        // u16
constexpr size_t kDaemonTtl = 78;         // u8
constexpr size_t kDaemonHas = 79;         // u8: 1 maxlen, 2 port, 4 ttl
constexpr size_t kDaemonGroupAf = 80;     // u16, 0 when no group
}  // namespace req

constexpr uint8_t kDaemonHasMaxlen = 1, kDaemonHasPort = 2, kDaemonHasTtl = 4;

// Reads request record `index` of `data` into `out`. The TypeScript layer
// has validated every value; this checks only what would make a record
// unusable (an unknown command or family, a string index out of range),
// which means a bug on our side, and says so in `error`.
bool ReadRequest(const uint8_t* data, size_t index, const std::vector<std::string>& strings,
                 Request& out, std::string& error);

// The family of the service request record `index` names (AF_INET when
// it names none): the family of destinations whose replies leave it out.
uint16_t ServiceAf(const uint8_t* data, size_t index);

// The inverse, for tests and the benchmark's floor probe.
void WriteRequest(const Request& r, uint8_t* record, std::vector<std::string>& strings);

// ---- Replies (native -> TypeScript) ----------------------------------------

constexpr size_t kReplySize = 160;

// Reply kinds (byte 0).
constexpr uint8_t kService = 1, kDest = 2, kDaemon = 3, kInfo = 4, kTimeouts = 5;

// Every reply record starts with its kind and the index of the request it
// answers. String fields hold an index + 1; 0 = none.
namespace rep {
constexpr size_t kKind = 0;         // u8
constexpr size_t kHasStats = 1;     // u8: 1 when the kernel sent counters
constexpr size_t kHasTunnel = 2;    // u8: destinations, 1 when tunnel attributes came
constexpr size_t kRequest = 4;      // u32
constexpr size_t kAf = 8;           // u16, services and destinations
constexpr size_t kPort = 10;        // u16
constexpr size_t kAddr = 12;        // 16 bytes
constexpr size_t kAddrText = 28;    // u32 string: IPv6 text (inet_ntop); 0 for IPv4
// Services.
constexpr size_t kSvcProtocol = 32;  // u16
constexpr size_t kSvcSched = 34;     // u16 string
constexpr size_t kSvcFwmark = 36;    // u32
constexpr size_t kSvcFlags = 40;     // u32, flags & mask
constexpr size_t kSvcTimeout = 44;   // u32
constexpr size_t kSvcNetmask = 48;   // u32, as in requests
constexpr size_t kSvcPe = 52;        // u16 string
// Destinations.
constexpr size_t kDestFwd = 32;       // u32
constexpr size_t kDestWeight = 36;    // u32
constexpr size_t kDestUThresh = 40;   // u32
constexpr size_t kDestLThresh = 44;   // u32
constexpr size_t kDestActive = 48;    // u32
constexpr size_t kDestInactive = 52;  // u32
constexpr size_t kDestPersist = 56;   // u32
constexpr size_t kDestTunType = 60;   // u8
constexpr size_t kDestTunPort = 62;   // u16
constexpr size_t kDestTunFlags = 64;  // u16
// Counters of services and destinations: ten u64, in IPVS_STATS_ATTR order
// (conns, inpkts, outpkts, inbytes, outbytes, cps, inpps, outpps, inbps, outbps).
constexpr size_t kStats = 72;
// Daemons.
constexpr size_t kDaemonState = 8;    // u32
constexpr size_t kDaemonSyncId = 12;  // u32
constexpr size_t kDaemonIfn = 16;     // u16 string
constexpr size_t kDaemonMaxlen = 18;  // u16
constexpr size_t kDaemonPort = 20;    // u16
constexpr size_t kDaemonTtl = 22;     // u8
constexpr size_t kDaemonHas = 23;     // u8, as in requests
constexpr size_t kDaemonGroupAf = 24; // u16
constexpr size_t kDaemonGroup = 28;   // u32 string: the group's text
// Info.
constexpr size_t kInfoVersion = 8;    // u32
constexpr size_t kInfoConnTab = 12;   // u32
// Timeouts.
constexpr size_t kTimeoutTcp = 8;     // u32
constexpr size_t kTimeoutTcpFin = 12; // u32
constexpr size_t kTimeoutUdp = 16;    // u32
}  // namespace rep

static_assert(rep::kStats + 10 * 8 <= kReplySize, "reply record too small for counters");

// Where reply records are written. A handle keeps one and hands it to each
// call in turn (see ArenaSlot in handle.cc): a large dump then writes into
// pages already in memory instead of faulting in fresh ones every time.
using Arena = std::shared_ptr<std::vector<uint8_t>>;

// Appends reply records and interns their strings (scheduler names repeat
// across thousands of services; each distinct one crosses N-API once).
class ReplyWriter {
 public:
  // Writes into `arena`, emptied first (its capacity is kept).
  explicit ReplyWriter(Arena arena = std::make_shared<std::vector<uint8_t>>())
      : arena_(std::move(arena)), bytes_(*arena_) {
    bytes_.clear();
  }
  void Add(uint32_t request, const Reply& r, uint16_t default_af);
  void AddService(uint32_t request, const Service& s);
  void AddDest(uint32_t request, const Destination& d, uint16_t default_af);

  size_t count() const { return bytes_.size() / kReplySize; }
  // Drops the records after the first `count` (a dump read again).
  void Truncate(size_t count) { bytes_.resize(count * kReplySize); }
  std::vector<uint8_t>& bytes() { return bytes_; }
  const Arena& arena() const { return arena_; }
  std::vector<std::string>& strings() { return strings_; }

 private:
  uint8_t* Next(uint8_t kind, uint32_t request);
  uint32_t Intern(const std::string& s);  // index + 1
  uint32_t Text(const std::string& s);    // index + 1, not interned

  Arena arena_;
  std::vector<uint8_t>& bytes_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> interned_;
};

// { request: {size, offsets...}, reply: {...}, flags, kinds }, for TypeScript.
Napi::Object Layout(Napi::Env env);

}  // namespace rec
}  // namespace ipvs
