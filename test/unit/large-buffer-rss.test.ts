/**
 * zeroedBytes() (lib/netlink/large-buffer.ts): from 2 MiB on, where the
 * kernel has transparent huge pages, a buffer in a mapping of its own that
 * the kernel is asked to back with them, given back when the buffer is
 * collected; apply() writes a big batch's records into one. Where the
 * kernel has none (mode `never`), an ordinary buffer. Checked in the
 * kernel's own account of this process's memory, /proc/self/smaps: each
 * mapping's place, size and flags ("hg" is MADV_HUGEPAGE). Like the files
 * that read the resident set, it runs on node on the host's kernel only
 * (the package tests leave out *-rss files: under qemu-user the mappings
 * are the emulator's, and Bun collects its own way).
 */
import { readFileSync } from 'node:fs';
import t from 'tap';

import type { BatchOp } from '../../lib/index.js';
import { kernelOffersHugePages, offersHugePages, zeroedBytes } from '../../lib/netlink/large-buffer.js';
import { gc } from '../support/gc.js';
import { stubIpvs } from '../support/ipvs-stub.js';

const MiB = 2 ** 20;
// Where the kernel gives no huge pages (built without them, or mode
// `never`), a big buffer is an ordinary one, as a small one always is.
const hugePages = kernelOffersHugePages();

interface Mapping {
  start: bigint;
  bytes: number;
  flags: string[];
}

function mappings(): Mapping[] {
  const out: Mapping[] = [];
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (range) out.push({ start: BigInt(`0x${range[1]}`), bytes: Number(BigInt(`0x${range[2]}`) - BigInt(`0x${range[1]}`)), flags: [] });
    else if (line.startsWith('VmFlags:')) out.at(-1)!.flags = line.slice(8).trim().split(/\s+/);
  }
  return out;
}

/** Mappings now that were not there in `before`, of exactly `bytes`. */
function newMappings(before: Mapping[], bytes: number): Mapping[] {
  const old = new Set(before.map((m) => `${m.start}:${m.bytes}`));
  return mappings().filter((m) => m.bytes === bytes && !old.has(`${m.start}:${m.bytes}`));
}

/** Collections, with turns of the event loop between (backing stores are freed after one), until `gone()` or `rounds` pass. */
async function collectedUntil(gone: () => boolean, rounds = 10): Promise<boolean> {
  for (let i = 0; i < rounds && !gone(); i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  return gone();
}

t.test('the kernel\'s huge page mode, read from sysfs', async (t) => {
  t.equal(offersHugePages('always [madvise] never\n'), true);
  t.equal(offersHugePages('[always] madvise never\n'), true);
  t.equal(offersHugePages('always madvise [never]\n'), false);
  t.equal(offersHugePages(''), false, 'no file: a kernel built without them');
});

t.test('from 2 MiB on: zeroed, in its own aligned mapping advised for huge pages, unmapped once collected', async (t) => {
  const bytes = 5 * MiB + 96;
  const before = mappings();
  let buffer: Uint8Array | undefined = zeroedBytes(bytes);
  t.equal(buffer.length, bytes, 'exactly the bytes asked for');
  t.ok(buffer.every((b) => b === 0), 'zeroed');
  buffer.fill(7);
  t.equal(buffer[bytes - 1], 7, 'writable to its last byte');

  const found = newMappings(before, 6 * MiB); // rounded up to whole 2 MiB pages
  if (!hugePages) {
    t.same(found.filter((m) => m.flags.includes('hg')), [], 'no huge pages here: no mapping of its own');
    return;
  }
  t.equal(found.length, 1, 'one new mapping of 6 MiB');
  const m = found[0]!;
  t.equal(m.start % BigInt(2 * MiB), 0n, 'at a 2 MiB boundary, where a huge page can back it');
  t.ok(m.flags.includes('hg'), `advised for huge pages (VmFlags: ${m.flags.join(' ')})`);

  buffer = undefined;
  const gone = () => !mappings().some((x) => x.start === m.start && x.bytes === m.bytes);
  t.ok(await collectedUntil(gone), 'the mapping is given back once the buffer is collected');
  t.equal(buffer, undefined);
});

t.test('under 2 MiB: an ordinary buffer, no mapping of its own', async (t) => {
  const before = mappings();
  const buffer = zeroedBytes(2 * MiB - 8);
  t.equal(buffer.length, 2 * MiB - 8);
  t.ok(buffer.every((b) => b === 0), 'zeroed');
  t.same(newMappings(before, 2 * MiB).filter((m) => m.flags.includes('hg')), [], 'no huge-page mapping was made for it');
});

t.test("apply() writes a big batch's request records into such a buffer", async (t) => {
  // 25,000 ops of 96 bytes each: 2.3 MiB of records, rounded up to 4 MiB.
  const ops: BatchOp[] = [];
  for (let i = 0; i < 25_000; i++) {
    const service = { protocol: 'tcp', address: `10.3.${i >> 8}.${i & 255}`, port: 80 } as const;
    ops.push({ op: 'addService', service: { ...service, scheduler: 'rr' } });
  }
  const before = mappings();
  let seen: { bytes: number; found: Mapping[] } | undefined;
  const ipvs = stubIpvs({
    execute: async (records) => {
      seen = { bytes: records.buffer.byteLength, found: newMappings(before, 4 * MiB) };
      return { failures: [], records: new ArrayBuffer(0), strings: [] };
    },
  });
  const results = await ipvs.apply(ops);
  t.equal(results.length, ops.length);
  t.ok(results.every((r) => r.ok));
  t.equal(seen?.bytes, 25_000 * 96, 'a buffer of exactly the batch, as the writer sized it');
  if (!hugePages) {
    t.same(seen?.found.filter((m) => m.flags.includes('hg')), [], 'no huge pages here: no mapping of its own');
    return;
  }
  t.equal(seen?.found.length, 1, 'in a mapping of its own, made for this batch');
  t.ok(seen?.found[0]?.flags.includes('hg'), 'advised for huge pages');
});
