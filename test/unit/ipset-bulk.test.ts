// The bulk loader's bookkeeping (native/ipset/bulk.cc), driven through
// scripted kernel answers: a fake kernel in JavaScript that works through each
// message's elements in order and stops at the first it refuses, as
// ip_set_core.c's ip_set_ad() does. Shows that every entry is attempted exactly
// once, that the rest of a refused message is resent without it, that windows
// respect the receive budget, and which errors stop the load.
import t from 'tap';

import { native } from '../../lib/netlink/binding.js';

interface Answer {
  error?: number;
  lineno?: number;
  broken?: boolean;
  unsent?: boolean;
}
interface Result {
  errno: number;
  code: string;
  applied: number;
  index: number;
  messages: number;
  failures: Array<{ index: number; errno: number; code: string; message: string }>;
  skipped: number[];
  unconfirmed: number[];
  halt?: { errno: number; code: string; message: string };
  windows: number[][][];
}
type Answerer = (window: number[][]) => Answer[];

const c = native.ipsetConstants;
const HASH_FULL = c.IPSET_ERR_HASH_FULL;
const EXIST = c.IPSET_ERR_EXIST;

function simulate(op: Record<string, unknown>, answer: Answerer): Result {
  return (native.ipsetBulkSimulate as (o: object, a: Answerer) => Result)(op, answer);
}

const ips = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `10.0.${(from + i) >> 8}.${(from + i) & 255}`);

/** A hash:ip set in JavaScript: refuses duplicates and, past maxElem, new elements. */
function fakeKernel(entries: string[], opts: { maxElem?: number; present?: string[] } = {}) {
  const set = new Set(opts.present ?? []);
  const attempts = new Array<number>(entries.length).fill(0);
  const answer: Answerer = (window) =>
    window.map((lines) => {
      for (const lineno of lines) {
        const i = lineno - 1;
        attempts[i]++;
        if (set.has(entries[i])) return { error: EXIST, lineno };
        if (opts.maxElem !== undefined && set.size >= opts.maxElem) return { error: HASH_FULL, lineno };
        set.add(entries[i]);
      }
      return { error: 0 };
    });
  return { set, attempts, answer };
}

t.test('nothing refused: every entry once, windows within the receive budget', async (t) => {
  const entries = ips(1000);
  const k = fakeKernel(entries);
  const r = simulate({ cmd: 'add', type: 'hash:ip', entries: entries.join('\n'), budget: 8 * 1024, maxBytes: 1024 }, k.answer);
  t.match(r, { errno: 0, applied: 1000, index: -1, failures: [], skipped: [], unconfirmed: [] });
  t.same(k.attempts, new Array(1000).fill(1), 'each entry attempted once');
  t.ok(r.windows.length > 1, `${r.windows.length} windows`);
  // A 1 KiB message answered by an echo of itself plus 1 KiB: at most 4 per 8 KiB.
  t.ok(r.windows.every((w) => w.length >= 1 && w.length <= 4), 'each window fits the budget');
  t.equal(r.messages, r.windows.flat().length);
  t.same(r.windows.flat(2), entries.map((_, i) => i + 1), 'LINENO is the caller index + 1, in order');
});

t.test('a refused entry: the rest of its message is resent without it', async (t) => {
  const entries = ips(10);
  const k = fakeKernel(entries, { present: [entries[4]] });
  const r = simulate({ cmd: 'add', type: 'hash:ip', entries: entries.join('\n'), budget: 1 << 20 }, k.answer);
  t.same(r.windows, [[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]], [[6, 7, 8, 9, 10]]]);
  t.match(r, { code: 'IPSET_ERR_EXIST', errno: EXIST, index: 4, applied: 9, skipped: [] });
  t.same(r.failures, [{ index: 4, errno: EXIST, code: 'IPSET_ERR_EXIST', message: 'the element is already in the set' }]);
  t.same(k.attempts, new Array(10).fill(1));
});

t.test('dense refusals: every entry still attempted exactly once, resent messages shrink', async (t) => {
  const entries = ips(3000);
  const present = entries.filter((_, i) => i % 3 === 0);
  const k = fakeKernel(entries, { present });
  const r = simulate({ cmd: 'add', type: 'hash:ip', entries: entries.join('\n'), budget: 1 << 20 }, k.answer);
  t.same(k.attempts, new Array(3000).fill(1), 'each entry attempted once');
  t.equal(r.failures.length, 1000);
  t.same(r.failures.map((f) => f.index), present.map((_, j) => j * 3), 'in the caller order');
  t.equal(r.applied, 2000);
  t.equal(k.set.size, 3000);
  const sizes = r.windows.map((w) => Math.max(...w.map((m) => m.length)));
  t.ok(sizes[sizes.length - 1] < sizes[0] / 4, `largest message per window: ${sizes[0]} entries first, ${sizes[sizes.length - 1]} last`);
});

t.test('HASH_FULL stops the load; what was never attempted is skipped', async (t) => {
  const entries = ips(100);
  const k = fakeKernel(entries, { maxElem: 30 });
  const r = simulate({ cmd: 'add', type: 'hash:ip', entries: entries.join('\n'), budget: 4 * 1024, maxBytes: 512 }, k.answer);
  t.match(r, { code: 'IPSET_ERR_HASH_FULL', index: 30, applied: 30, halt: { code: 'IPSET_ERR_HASH_FULL' } });
  t.equal(k.set.size, 30);
  const refused = r.failures.map((f) => f.index);
  t.ok(refused.every((i) => k.attempts[i] === 1));
  t.equal(r.applied + refused.length + r.skipped.length, 100, 'every entry accounted for');
  t.ok(r.skipped.every((i) => k.attempts[i] === 0), 'skipped entries were never attempted');
  t.ok(r.skipped.length > 0);
});

t.test('the same number means "out of range" for a bitmap and "name missing" for a list: not a stop', async (t) => {
  for (const [type, entries] of [['bitmap:port', ['1', '2', '3', '4']], ['list:set', ['a', 'b', 'c', 'd']]] as const) {
    const r = simulate({ cmd: 'add', type, entries: entries.join('\n'), budget: 1 << 20 }, (w) =>
      w.map((lines) => (lines.includes(2) ? { error: HASH_FULL, lineno: 2 } : { error: 0 })),
    );
    t.match(r, { index: 1, applied: 3, skipped: [] }, type);
    t.notOk(r.halt, `${type}: no halt`);
  }
});

t.test('a message refused as a whole (the set is gone) stops the load', async (t) => {
  const entries = ips(60);
  let first = true;
  const r = simulate({ cmd: 'del', type: 'hash:ip', entries: entries.join('\n'), budget: 2 * 1024, maxBytes: 256 }, (w) => {
    const out = w.map(() => (first ? { error: 0 } : { error: 2 }));
    first = false;
    return out;
  });
  const firstWindow = r.windows[0].flat().length;
  t.match(r, { code: 'ENOENT', errno: 2, index: -1, applied: firstWindow, failures: [], halt: { code: 'ENOENT' } });
  t.equal(r.windows.length, 2, 'nothing is sent after the refusal');
  t.same(r.skipped, entries.map((_, i) => i).slice(firstWindow));
});

t.test('a broken conversation: unanswered entries are unconfirmed, the rest skipped', async (t) => {
  const entries = ips(60);
  const r = simulate({ cmd: 'add', type: 'hash:ip', entries: entries.join('\n'), budget: 4 * 1024, maxBytes: 256 }, (w) =>
    w.map((_, j) => (j === 0 ? { error: 0 } : { broken: true })),
  );
  const [done, ...unanswered] = r.windows[0];
  t.equal(r.windows.length, 1);
  t.match(r, { code: 'ETIMEDOUT', index: -1, applied: done.length, failures: [] });
  t.same(r.unconfirmed, unanswered.flat().map((l) => l - 1));
  t.equal(r.applied + r.unconfirmed.length + r.skipped.length, 60);
});

t.test('closed before a window went out: its entries are skipped, not unconfirmed', async (t) => {
  // close() landing between the loader taking a window and the socket
  // sending it: the channel refuses the whole window as closed, and none
  // of it went out, so none of it is unconfirmed.
  const entries = ips(60);
  let windows = 0;
  const r = simulate({ cmd: 'add', type: 'hash:ip', entries: entries.join('\n'), budget: 4 * 1024, maxBytes: 256 }, (w) => {
    const first = windows++ === 0;
    return w.map(() => (first ? { error: 0 } : { unsent: true }));
  });
  const done = r.windows[0].flat().length;
  t.equal(r.windows.length, 2, 'nothing is tried after the close');
  t.match(r, { code: 'EBADF', index: -1, applied: done, failures: [], unconfirmed: [] });
  t.same(r.skipped, entries.map((_, i) => i).slice(done), 'everything after the first window is skipped');
  t.equal(r.messages, r.windows[0].length, 'the window the close stopped sent no message');
});

t.test('a conversation broken after a close: what went out is unconfirmed, what did not is skipped', async (t) => {
  const entries = ips(60);
  const r = simulate({ cmd: 'add', type: 'hash:ip', entries: entries.join('\n'), budget: 4 * 1024, maxBytes: 256 }, (w) =>
    w.map((_, j) => (j === 0 ? { error: 0 } : j === 1 ? { broken: true } : { unsent: true })),
  );
  const [done, lost] = r.windows[0];
  t.equal(r.windows.length, 1);
  t.match(r, { code: 'ETIMEDOUT', applied: done.length, failures: [] });
  t.same(r.unconfirmed, lost.map((l) => l - 1));
  t.equal(r.skipped.length, 60 - done.length - lost.length);
  t.equal(r.messages, 2, 'messages that went out: the answered one and the lost one');
});
