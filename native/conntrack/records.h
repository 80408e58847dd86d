// Entries cross the N-API boundary as fixed-size records in one buffer,
// which the TypeScript layer reads with a DataView (lib/conntrack/records.ts):
// building each entry's ~30 properties through N-API would cost more than
// the kernel's work for a large table. This header is the only definition
// of the layout; the offsets are exported to TypeScript at load time.
//
// Host byte order, naturally aligned. Addresses take 16 bytes (IPv4 in the
// first four); an IPv6 address also comes as text (inet_ntop) in the
// strings table, referred to by index + 1.
#pragma once

#include <napi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "types.h"

namespace conntrack {
namespace rec {

constexpr size_t kSize = 208;

// Entry fields.
constexpr size_t kEvent = 0;      // u8, Event
constexpr size_t kFamily = 1;     // u8, NFPROTO_*
constexpr size_t kState = 2;      // u8, protocol state (present::kState)
constexpr size_t kPresent = 4;    // u32, present::*
constexpr size_t kStatus = 8;     // u32
constexpr size_t kTimeout = 12;   // u32
constexpr size_t kMark = 16;      // u32
constexpr size_t kId = 20;        // u32
constexpr size_t kUse = 24;       // u32
constexpr size_t kZone = 28;      // u16
constexpr size_t kOrig = 32;      // tuple
constexpr size_t kReply = 84;     // tuple
constexpr size_t kPacketsOrig = 136;   // u64
constexpr size_t kBytesOrig = 144;     // u64
constexpr size_t kPacketsReply = 152;  // u64
constexpr size_t kBytesReply = 160;    // u64
constexpr size_t kStart = 168;    // u64, ns since the epoch
constexpr size_t kStop = 176;     // u64
constexpr size_t kLabels = 184;   // 16 bytes, bit i = label i
constexpr size_t kHelper = 200;   // u32 string
constexpr size_t kIndex = 204;    // u32: which request or key it answers

// Tuple fields, from the tuple's offset.
constexpr size_t kTupleSize = 52;
constexpr size_t kSrc = 0;        // 16 bytes
constexpr size_t kDst = 16;       // 16 bytes
constexpr size_t kSrcText = 32;   // u32 string (IPv6 only)
constexpr size_t kDstText = 36;   // u32 string (IPv6 only)
constexpr size_t kSport = 40;     // u16 (ICMP: the id)
constexpr size_t kDport = 42;     // u16
constexpr size_t kIcmpType = 44;  // u8
constexpr size_t kIcmpCode = 45;  // u8
constexpr size_t kTupleZone = 46; // u16
constexpr size_t kTupleFlags = 48;  // u8: kHasPorts | kHasIcmp | kHasZone
constexpr size_t kProto = 49;     // u8

constexpr uint8_t kHasPorts = 1, kHasIcmp = 2, kHasZone = 4;

// Collects records and the strings they refer to.
class Writer {
 public:
  void Add(const Entry& e, uint32_t index);
  // A record that carries only its kind (an event stream's overrun).
  void AddMarker(uint8_t kind);
  size_t count() const { return bytes_.size() / kSize; }
  // Hands the records to JavaScript: { records: ArrayBuffer, strings }.
  Napi::Object ToJs(Napi::Env env) const;
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  uint32_t String(std::string s);
  void AddTuple(uint8_t* at, uint8_t family, const Tuple& t);

  std::vector<uint8_t> bytes_;
  std::vector<std::string> strings_;
};

// The layout above as { name: offset }, for the TypeScript reader.
Napi::Object LayoutToJs(Napi::Env env);

}  // namespace rec
}  // namespace conntrack
