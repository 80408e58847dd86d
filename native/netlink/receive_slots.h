// The memory a socket receives into: kSlots datagrams of up to kSlotSize
// bytes each, so that one recvmmsg drains many answers. A big dump or a
// long batch's acknowledgements fill many slots, and the pages they touch
// would stay resident for the socket's whole life, though a long-running
// caller (the proxy) needs them only during its periodic full reads.
// GiveBack() returns the slots past the first kKept to the kernel; the next
// big read faults them in again. The owner decides when: only while no
// receive is running, and best once its caller is idle (a loop of dumps
// should keep them).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nl {

class ReceiveSlots {
 public:
  static constexpr size_t kSlots = 64;
  static constexpr size_t kSlotSize = 64 * 1024;
  // Never given back: the few answers of an incremental change (a handful
  // of acknowledgements, one datagram each) land here and never fault.
  static constexpr size_t kKept = 4;

  ReceiveSlots() = default;
  ~ReceiveSlots();
  ReceiveSlots(const ReceiveSlots&) = delete;
  ReceiveSlots& operator=(const ReceiveSlots&) = delete;

  // Maps the slots (page-aligned, their own mapping, so that giving pages
  // back never touches anything else); false when the memory is refused.
  bool Map();
  uint8_t* slot(size_t i) { return base_ + i * kSlotSize; }
  // A receive wrote into the first `n` slots.
  void Filled(size_t n) {
    if (n > kKept) spilled_ = true;
  }
  // Gives back the slots past kKept once a receive since the last call went
  // past them; returns the bytes of the range given back (0 when none did).
  size_t GiveBack();
  // The slots' bytes resident now, as the kernel reports them (mincore):
  // for tests and diagnostics, it costs a system call.
  size_t ResidentBytes() const;

 private:
  uint8_t* base_ = nullptr;
  bool spilled_ = false;  // a slot past kKept written since the last GiveBack()
};

}  // namespace nl
