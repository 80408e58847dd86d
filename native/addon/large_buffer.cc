#include "large_buffer.h"

#include <sys/mman.h>

#include <cstdint>

namespace addon {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// `len` bytes (a multiple of kHugePage) at a kHugePage boundary, or nullptr.
// A huge page can only back an aligned 2 MiB range, and mmap aligns to 4 KiB:
// one page more is mapped and the ends around the aligned range given back.
void* MapAligned(size_t len) {
  void* raw = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t start = RoundUp(begin, kHugePage);
  const uintptr_t end = begin + len + kHugePage;
  if (start > begin) munmap(raw, start - begin);
  if (end > start + len) munmap(reinterpret_cast<void*>(start + len), end - (start + len));
  return reinterpret_cast<void*>(start);
}

}  // namespace

Napi::Value NewLargeBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const double requested = info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : -1;
  if (!(requested >= 0 && requested <= 0x7fffffff) || requested != static_cast<double>(static_cast<size_t>(requested))) {
    throw Napi::RangeError::New(env, "largeBuffer: bytes must be an integer from 0 to 2147483647");
  }
  const size_t bytes = static_cast<size_t>(requested);
  if (bytes == 0) return Napi::ArrayBuffer::New(env, 0);
  const size_t len = RoundUp(bytes, kHugePage);
  void* data = MapAligned(len);
  // Out of address space: V8's own allocation reports it the usual way.
  if (data == nullptr) return Napi::ArrayBuffer::New(env, bytes);
  // Refused where the kernel has no transparent huge pages (EINVAL): the
  // memory is then ordinary pages, which is all the hint was about.
  madvise(data, len, MADV_HUGEPAGE);
  return Napi::ArrayBuffer::New(env, data, bytes, [len](Napi::Env, void* p) { munmap(p, len); });
}

}  // namespace addon
