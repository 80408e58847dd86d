/**
 * pinNativeHeapThresholds() (lib/netlink/native-heap.ts): glibc's mmap
 * threshold held where it starts, so that a big block freed is given back
 * to the kernel rather than kept in an arena. Each case runs in a process of
 * its own (the setting is for the whole process, and cannot be undone): an
 * 8 MiB buffer is freed first (that is what makes glibc raise its threshold
 * when left to itself), then a 1 MiB one is made and freed, and the
 * process's mappings (/proc/self/maps) say where it lived. Like the other
 * *-rss files, it runs on node on the host's kernel only.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

import { pinNativeHeapThresholds } from '../../lib/index.js';

const CHILD = `
const { readFileSync } = await import('node:fs');
const { pinNativeHeapThresholds } = await import('ipvs-netlink');
const MiB = 2 ** 20;
const maps = () => new Map(readFileSync('/proc/self/maps', 'utf8').trim().split('\\n').map((l) => {
  const [a, b] = l.split(' ')[0].split('-');
  return [a, parseInt(b, 16) - parseInt(a, 16)];
}));
const collect = async () => {
  for (let i = 0; i < 2; i++) {
    gc({ type: 'major', execution: 'sync' });
    await new Promise((r) => setTimeout(r, 50));
  }
};
const pinned = process.argv[1] === 'pin' ? pinNativeHeapThresholds() : undefined;
let big = new ArrayBuffer(8 * MiB);
new Uint8Array(big).fill(1);
big = undefined;
await collect();
const before = maps();
let one = new ArrayBuffer(MiB);
new Uint8Array(one).fill(1);
const own = [...maps()].filter(([a, n]) => !before.has(a) && n > MiB && n <= MiB + 8192).map(([a]) => a);
one = undefined;
await collect();
const after = maps();
console.log(JSON.stringify({ pinned, ownMappings: own.length, leftMapped: own.filter((a) => after.has(a)).length }));
`;

function child(pin: boolean): { pinned?: boolean; ownMappings: number; leftMapped: number } {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', CHILD, ...(pin ? ['pin'] : [])], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: '' },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as { pinned?: boolean; ownMappings: number; leftMapped: number };
}

t.test('left to itself, glibc serves a 1 MiB block from its arena once a bigger one was freed', (t) => {
  const r = child(false);
  t.equal(r.ownMappings, 0, 'no mapping of its own: it stays in the arena when freed');
  t.end();
});

t.test('pinned, the same block has a mapping of its own, unmapped when it is freed', (t) => {
  const r = child(true);
  t.equal(r.pinned, true, 'glibc took both thresholds');
  t.equal(r.ownMappings, 1, 'one mapping of about 1 MiB appeared for it');
  t.equal(r.leftMapped, 0, 'and went when the buffer was collected');
  t.end();
});

t.test('a threshold glibc cannot take is refused before it is set, naming the field', (t) => {
  t.throws(() => pinNativeHeapThresholds(64 * 2 ** 20), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', field: 'bytes' });
  t.throws(() => pinNativeHeapThresholds(1.5), { name: 'RangeError', field: 'bytes' });
  t.throws(() => pinNativeHeapThresholds('128k' as unknown as number), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', field: 'bytes' });
  t.end();
});
