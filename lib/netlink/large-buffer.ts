/**
 * Zeroed byte buffers for bulk work.
 */
import { readFileSync } from 'node:fs';

import { native } from './binding.js';

/** One transparent huge page: below it, pages of its own gain nothing. */
const LARGE_BYTES = 2 << 20;

/** The kernel's transparent huge page mode, as sysfs shows it: `always [madvise] never`. */
const THP_ENABLED = '/sys/kernel/mm/transparent_hugepage/enabled';

/**
 * Whether the kernel backs advised memory with huge pages, from the text of
 * THP_ENABLED (mode `always` or `madvise`). Without them a mapping of its
 * own gains nothing and gives up reusing memory malloc already holds.
 */
export function offersHugePages(modeText: string): boolean {
  return /\[(always|madvise)\]/.test(modeText);
}

function hugePageMode(): string {
  try {
    return readFileSync(THP_ENABLED, 'utf8');
  } catch {
    return ''; // a kernel built without transparent huge pages
  }
}

let hugePages: boolean | undefined;

/** Whether this kernel offers huge pages; read once, at the first big buffer. */
export function kernelOffersHugePages(): boolean {
  return (hugePages ??= offersHugePages(hugePageMode()));
}

/**
 * A zeroed buffer of `bytes`. From 2 MiB on, where the kernel has
 * transparent huge pages, it has memory of its own from the addon, which
 * asks the kernel to back it with 2 MiB pages: a cold start's request
 * records (some 10 MiB for 100,000 operations) are then first touched in a
 * handful of page faults instead of thousands, each of which costs a real
 * kernel microseconds. The memory goes back to the kernel when the buffer
 * is collected. Other buffers come from V8 as usual.
 */
export function zeroedBytes(bytes: number): Uint8Array {
  if (bytes < LARGE_BYTES || !kernelOffersHugePages()) return new Uint8Array(bytes);
  return new Uint8Array(native.largeBuffer(bytes));
}
