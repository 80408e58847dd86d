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
  // Small pages: a socket that only ever reads acknowledgements touches one
  // page, where a transparent huge page would make it 2 MiB resident (the
  // kernel's mode "always"). Refused by a kernel without huge pages: nothing to do.
  madvise(base_, kBytes, MADV_NOHUGEPAGE);
  return true;
}

size_t ReceiveSlots::GiveBack() {
  if (!spilled_) return 0;
  // A slot is a whole number of pages and the mapping starts on a page,
  // so the range needs no rounding. Every slot past kKept, not only those
  // written: pages may be resident beyond them (a huge page given before
  // MADV_NOHUGEPAGE took, or where it is refused), and advising pages that
  // are not there costs nothing. MADV_DONTNEED, not MADV_FREE: the pages
  // leave the resident set now, not when the system runs short.
  spilled_ = false;
  const size_t bytes = (kSlots - kKept) * kSlotSize;
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
