#include "receive_slots.h"

#include <sys/mman.h>
#include <unistd.h>

#include <vector>

namespace nl {

namespace {
constexpr size_t kBytes = ReceiveSlots::kSlots * ReceiveSlots::kSlotSize;
}  // namespace

ReceiveSlots::~ReceiveSlots() {
  if (base_ != nullptr) munmap(base_, kBytes);
}

bool ReceiveSlots::Map() {
  void* p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  base_ = static_cast<uint8_t*>(p);
  return true;
}

size_t ReceiveSlots::GiveBack() {
  if (filled_ <= kKept) return 0;
  // A slot is a whole number of pages and the mapping starts on a page,
  // so the range needs no rounding. MADV_DONTNEED, not MADV_FREE: the pages
  // leave the resident set now, not when the system runs short.
  const size_t bytes = (filled_ - kKept) * kSlotSize;
  filled_ = 0;
  if (madvise(slot(kKept), bytes, MADV_DONTNEED) != 0) return 0;
  return bytes;
}

size_t ReceiveSlots::ResidentBytes() const {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((kBytes + page - 1) / page);
  if (base_ == nullptr || mincore(base_, kBytes, in.data()) != 0) return 0;
  size_t pages = 0;
  for (unsigned char v : in) pages += v & 1;
  return pages * page;
}

}  // namespace nl
