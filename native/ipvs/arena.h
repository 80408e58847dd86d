// Where a handle's reply records live between calls (see ArenaSlot), and
// one call's hold on them (ArenaLease). Used on the JavaScript thread only.
#pragma once

#include <napi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "records.h"

namespace ipvs {

// The IPVS family id a handle resolved, shared with its jobs.
using FamilyIdRef = std::shared_ptr<std::atomic<uint16_t>>;

// The reply arena a handle lends to one call at a time, so that the replies
// of the next call are written into pages that are already in memory. The
// records reach JavaScript as a view of the arena, which is detached before
// the arena is written again: JavaScript can never see it change. An arena
// that one call filled past kKeepAtMost (a dump of a big table) is kept
// for a call that follows at once, and let go when the caller says it is
// idle (releaseReplies): held from one periodic read-back to the next, it
// would be tens of megabytes of a long-running process's resident set for
// nothing. Only the JavaScript thread touches the slot.
class ArenaSlot {
 public:
  // An arena for a new call: the slot's own, or a fresh one while another
  // call still holds it.
  rec::Arena Lease(bool* owned) {
    Detach();
    *owned = !busy_;
    if (busy_) return std::make_shared<std::vector<uint8_t>>();
    busy_ = true;
    return arena_;
  }
  // A second arena for the call that holds the first: a dump streamed to
  // JavaScript writes into one while JavaScript reads the other.
  rec::Arena Spare(bool owned) {
    if (!owned) return std::make_shared<std::vector<uint8_t>>();
    return spare_;
  }
  // The call that holds the slot's arena lent `view` to JavaScript.
  void Lent(const Napi::Value& view) {
    if (view.IsArrayBuffer()) lent_ = Napi::Persistent(view.As<Napi::ArrayBuffer>());
  }
  void Release() { busy_ = false; }

  // The view lent last is detached, and an arena grown past kKeepAtMost
  // let go (the memory behind a detached external ArrayBuffer is given back
  // at once, not at some later GC). Returns the bytes the slot keeps.
  //
  // Judged by capacity, not by what the last call wrote: a streamed dump
  // ends with a short last chunk in arenas that grew while JavaScript was
  // busy, and a small call right after a big one writes a few records into
  // the big one's memory. Either way what stays resident is the capacity.
  size_t TakeBack() {
    Detach();
    if (busy_) return 0;
    if (arena_->capacity() > kKeepAtMost) arena_ = std::make_shared<std::vector<uint8_t>>();
    if (spare_->capacity() > kKeepAtMost) spare_ = std::make_shared<std::vector<uint8_t>>();
    return arena_->capacity() + spare_->capacity();
  }

 private:
  void Detach() {
    if (lent_.IsEmpty()) return;
    Napi::ArrayBuffer view = lent_.Value();
    if (!view.IsDetached()) view.Detach();
    lent_.Reset();
  }

  // 4 MiB: about 26,000 reply records (an incremental sync's reads, a dump
  // of a few thousand services).
  static constexpr size_t kKeepAtMost = 4u << 20;
  rec::Arena arena_ = std::make_shared<std::vector<uint8_t>>();
  rec::Arena spare_ = std::make_shared<std::vector<uint8_t>>();
  bool busy_ = false;
  Napi::Reference<Napi::ArrayBuffer> lent_;
};

// One call's hold on an arena; given back when the job ends (on the
// JavaScript thread, where jobs are destroyed).
class ArenaLease {
 public:
  explicit ArenaLease(std::shared_ptr<ArenaSlot> slot) : slot_(std::move(slot)), arena_(slot_->Lease(&owned_)) {}
  ~ArenaLease() {
    if (owned_) slot_->Release();
  }
  ArenaLease(const ArenaLease&) = delete;
  ArenaLease& operator=(const ArenaLease&) = delete;

  const rec::Arena& arena() const { return arena_; }
  // The slot's second arena (a fresh one when the slot was busy).
  rec::Arena spare() const { return slot_->Spare(owned_); }
  // The result made on the JavaScript thread; its records view is remembered for detaching.
  Napi::Value Lend(Napi::Value result) {
    if (owned_) slot_->Lent(result.As<Napi::Object>().Get("records"));
    return result;
  }

 private:
  std::shared_ptr<ArenaSlot> slot_;
  bool owned_ = false;
  rec::Arena arena_;
};

}  // namespace ipvs
