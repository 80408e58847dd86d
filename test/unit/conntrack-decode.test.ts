// The decoder against the conntrack tool's own reading of the same bytes:
// each fixture (test/fixtures/conntrack*) holds the kernel's replies as
// the tool received them and what the tool printed from them, so every
// entry we decode must print the same, field by field. The filters the
// tool 1.4.7 applies itself (ports, reply addresses, ...) are held against
// the decoder's filtering of the unfiltered listing.
import t from 'tap';

import { native } from '../../lib/netlink/binding.js';
import { EntryRecords, type NativeRecords } from '../../lib/conntrack/records.js';
import * as validate from '../../lib/conntrack/validate.js';
import type { ConntrackEntry, ConntrackFilter } from '../../lib/conntrack/index.js';
import { loadFixture, messages } from '../support/fixtures.js';
import { parseToolList, parseToolStats, sideBySide } from '../support/conntrack-tool.js';

const NFNL_SUBSYS_CTNETLINK = 1;
const decode = native.conntrackDecode as (msgs: Buffer[], filter?: object) => NativeRecords & { errors: string[] };
const decodeStats = native.conntrackDecodeStats as (cpu: Buffer[], global?: Buffer) => { cpus: Array<Record<string, number>>; entries?: number };

/** The conntrack data messages the kernel sent (not acks, not NLMSG_DONE). */
function replies(name: string, folder: string): Buffer[] {
  return messages(loadFixture(folder, name).received)
    .filter((m) => m.type >> 8 === NFNL_SUBSYS_CTNETLINK)
    .map((m) => m.bytes);
}

function entries(msgs: Buffer[], filter?: ConntrackFilter): ConntrackEntry[] {
  const r = decode(msgs, filter === undefined ? undefined : validate.filter(filter));
  if (r.errors.length) throw new Error(`decode errors: ${r.errors.join('; ')}`);
  return new EntryRecords(r).entries();
}

const tupleText = (e: { orig: { src: string; dst: string; srcPort?: number; dstPort?: number } }) =>
  `${e.orig.src} ${e.orig.dst} ${e.orig.srcPort ?? ''} ${e.orig.dstPort ?? ''}`;

for (const folder of ['conntrack', 'conntrack-6.1']) {
  t.test(`${folder}: every entry as the tool printed it`, async (t) => {
    for (const name of ['list-all', 'list-inet', 'list-inet6', 'list-mark', 'list-mark-mask', 'list-status', 'list-counters', 'get-udp', 'get-icmp', 'get-ipv6']) {
      const fx = loadFixture(folder, name);
      const ours = entries(replies(name, folder));
      const theirs = parseToolList(fx.stdout ?? '');
      t.equal(ours.length, theirs.length, `${name}: as many entries as the tool printed`);
      t.ok(theirs.length > 0, `${name}: the tool printed entries`);
      for (const tool of theirs) {
        const e = ours.find((x) => String(x.id) === tool.rest.id);
        if (!e) {
          t.fail(`${name}: no entry with id ${tool.rest.id}`);
          continue;
        }
        const { ours: a, theirs: b } = sideBySide(e, tool);
        t.same(a, b, `${name}: ${tool.line.trim()}`);
      }
    }
  });

  t.test(`${folder}: the decoder filters as the tool does`, async (t) => {
    const all = replies('list-all', folder);
    const cases: Array<[string, ConntrackFilter]> = [
      ['list-inet', { family: 'inet' }],
      ['list-inet6', { family: 'inet6' }],
      ['list-mark', { mark: 7 }],
      ['list-mark-mask', { mark: { value: 7, mask: 0xf } }],
      ['list-status', { status: ['ASSURED'] }],
      ['list-udp-dport', { protocol: 'udp', orig: { dstPort: 53 } }],
      ['list-reply-src', { protocol: 'udp', reply: { src: '10.244.1.10' } }],
      ['list-ipv6-src', { family: 'inet6', orig: { src: 'fd00::1' } }],
      ['list-icmp', { protocol: 'icmp' }],
    ];
    for (const [name, filter] of cases) {
      const fx = loadFixture(folder, name);
      const want = parseToolList(fx.stdout ?? '').map((e) => `${e.orig.src} ${e.orig.dst} ${e.orig.sport ?? ''} ${e.orig.dport ?? ''}`).sort();
      const got = entries(all, filter).map(tupleText).sort();
      t.ok(want.length > 0, `${name}: the tool kept entries`);
      t.same(got, want, `${name}: ${JSON.stringify(filter)} keeps what \`${fx.command}\` printed`);
    }
  });

  t.test(`${folder}: counters as conntrack -S and -C print them`, async (t) => {
    const s = decodeStats(replies('stats-cpu', folder));
    const tool = parseToolStats(loadFixture(folder, 'stats-cpu').stdout ?? '');
    t.equal(s.cpus.length, tool.length, 'one object per CPU');
    for (const [i, line] of tool.entries()) {
      const c = s.cpus[i];
      t.same(
        { cpu: c.cpu, found: c.found, invalid: c.invalid, insert: c.insert, insert_failed: c.insertFailed, drop: c.drop, early_drop: c.earlyDrop, error: c.error, search_restart: c.searchRestart, clash_resolve: c.clashResolve, chaintoolong: c.chainTooLong },
        Object.fromEntries(['cpu', 'found', 'invalid', 'insert', 'insert_failed', 'drop', 'early_drop', 'error', 'search_restart', 'clash_resolve', 'chaintoolong'].map((k) => [k, line[k]])),
        `cpu ${line.cpu}`,
      );
    }
    const count = loadFixture(folder, 'count');
    const g = decodeStats([], replies('count', folder)[0]);
    t.equal(g.entries, Number((count.stdout ?? '').trim()), `entries: conntrack -C printed ${(count.stdout ?? '').trim()}`);
  });

  t.test(`${folder}: malformed input is an error, never a crash`, async (t) => {
    const [first] = replies('list-all', folder);
    for (const cut of [0, 10, 20, 24, 40, first.length - 1]) {
      const b = Buffer.from(first.subarray(0, cut));
      if (b.length >= 4) b.writeUInt32LE(b.length, 0);
      const r = decode([b]);
      t.equal(r.errors.length, 1, `cut at ${cut}: ${r.errors[0]}`);
    }
  });
}
