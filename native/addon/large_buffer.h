#pragma once
#include <napi.h>

namespace addon {

// largeBuffer(bytes): a zeroed ArrayBuffer of `bytes` in memory of its own,
// 2 MiB-aligned, that the kernel is asked to back with transparent huge
// pages (MADV_HUGEPAGE). For the one-shot buffers of bulk work (a cold
// start's request records run to megabytes): their first touches cost one
// page fault per 2 MiB instead of one per 4 KiB page. Where the kernel has
// no huge page free, it compacts memory for one or falls back to ordinary
// pages, as its defrag setting says; the JavaScript side asks only where
// the kernel has huge pages at all (lib/netlink/large-buffer.ts).
Napi::Value NewLargeBuffer(const Napi::CallbackInfo& info);

}  // namespace addon
