// Ruleset changes as they are committed (Nftables.events) against the
// kernel and nft's own monitor: the same announcements `nft monitor` prints
// (each change, rules as nft prints them, each transaction's generation and
// process), a library commit read back as the changes committed, replayed
// changes giving the same ruleset, dropped announcements announced, close()
// ending the iteration.
import t, { type Test } from 'tap';

import {
  type Change, type NftablesEvent, type NftablesEventStream, type Rule, type SetWithElements, Nftables, formatRule,
} from '../../lib/nftables/index.js';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

import { freshNetns, type Netns } from '../support/netns.js';
import { nftText, openNftables } from '../support/nft-tool.js';
import { KP_CHANGES } from '../support/nft-ruleset.js';

/** Transactions nft runs, one per command. */
const COMMANDS = [
  `table inet t {
    counter hits { }
    set s { type ipv4_addr; elements = { 10.0.0.1, 10.0.0.2 } }
    chain c {
      type filter hook input priority 0;
      ip saddr @s counter name "hits" accept
      tcp dport { 22, 80 } accept
    }
  }`,
  'insert rule inet t c meta l4proto udp drop',
  'add element inet pre r { 10.0.0.0/8, 192.168.1.1-192.168.1.5 }',
  'delete element inet t s { 10.0.0.1 }',
  'delete table inet t',
];

/** Events until `done` says enough (or a second passes without one). */
async function collect(stream: NftablesEventStream, done: (seen: NftablesEvent[]) => boolean): Promise<NftablesEvent[]> {
  const seen: NftablesEvent[] = [];
  while (!done(seen)) {
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([stream.next(), new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 1000)))]);
    clearTimeout(timer);
    if (!r || r.done) break;
    seen.push(r.value);
  }
  return seen;
}
const commits = (n: number) => (seen: NftablesEvent[]) => seen.filter((e) => e.type === 'commit').length >= n;

/** An element key as nft monitor prints it. */
const keyText = (k: unknown) => String(k);

/** What nft monitor prints for our events: one line per change, a set's elements one each, anonymous sets left out as nft leaves them. */
function monitorLines(events: NftablesEvent[]): string[] {
  const out: string[] = [];
  const sets: SetWithElements[] = [];
  for (const e of events) {
    if (e.type === 'commit') out.push(`# new generation ${e.generation} by process ${e.pid} (${e.process})`);
    if (e.type !== 'change') continue;
    const c: Change = e.change;
    const verb = c.op.startsWith('add') ? 'add' : 'delete';
    switch (c.op) {
      case 'addTable': case 'deleteTable': out.push(`${verb} table ${c.table.family} ${c.table.name}`); break;
      case 'addChain': case 'deleteChain': out.push(`${verb} chain ${c.chain.family} ${c.chain.table} ${c.chain.name}`); break;
      case 'addObject': case 'deleteObject': out.push(`${verb} ${c.object.type} ${c.object.family} ${c.object.table} ${c.object.name}`); break;
      case 'addSet':
        sets.push({ ...c.set, elements: [] });
        if (!c.set.name.startsWith('__set')) out.push(`${verb} set ${c.set.family} ${c.set.table} ${c.set.name}`);
        break;
      // nft prints an anonymous set's deletion, though not its addition.
      case 'deleteSet': out.push(`${verb} set ${c.set.family} ${c.set.table} ${c.set.name}`); break;
      case 'addElements': case 'deleteElements':
        sets.find((s) => s.name === c.set.name)?.elements.push(...c.elements);
        if (!c.set.name.startsWith('__set')) for (const el of c.elements) out.push(`${verb} element ${c.set.family} ${c.set.table} ${c.set.name} { ${keyText(el.key)} }`);
        break;
      case 'addRule': case 'insertRule':
        out.push(`${c.op === 'addRule' ? 'add' : 'insert'} rule ${c.rule.family} ${c.rule.table} ${c.rule.chain} ${formatRule(c.rule as Rule, { sets })}`);
        break;
      case 'deleteRule': out.push(`delete rule ${c.rule.family} ${c.rule.table} ${c.rule.chain} handle ${c.rule.handle}`); break;
    }
  }
  return out;
}

/** nft monitor's lines with what follows a name cut (bodies, `{ packets 0 bytes 0 }`), except for rules and elements. */
function theirLines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim()).map((l) => {
    const m = /^(add|delete) (table|chain|set|counter|quota|limit) (\S+) (\S+)(?: (\S+))?/.exec(l);
    return m ? m[0] : l.trimEnd();
  });
}

/** `nft monitor` running in `ns`: its lines so far, and a wait for a line to come. */
function nftMonitor(t: Test, ns: Netns): { lines: string[]; until(test: (line: string) => boolean): Promise<void> } {
  const child = spawn('ip', ['netns', 'exec', ns.name, 'nft', 'monitor'], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => child.kill());
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  let rest = '';
  child.stdout.on('data', (d: Buffer) => {
    const parts = (rest + d.toString()).split('\n');
    rest = parts.pop()!;
    lines.push(...parts.filter((l) => l.trim()));
    for (const w of waiters.splice(0)) w();
  });
  return {
    lines,
    async until(test) {
      while (!lines.some(test)) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

t.test('every change nft commits, announced as nft monitor prints it', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await ns.exec('nft', ['-f', '-'], 'table inet pre { set r { type ipv4_addr; flags interval; }; }\n');
  // nft's own monitor, known to be listening once it has printed a change made for the purpose.
  const monitor = nftMonitor(t, ns);
  const readiness: Array<Promise<string>> = [];
  const ready = setInterval(() => readiness.push(ns.exec('nft', ['add', 'table', 'ip', 'ready'])), 100);
  await monitor.until((l) => l.startsWith('# new generation'));
  clearInterval(ready);
  await Promise.all(readiness);
  const nft = await openNftables(t, ns);
  const stream = await nft.events();
  t.teardown(() => stream.close());
  // Both are compared from the first generation after the readiness changes.
  const before = await nft.generation();
  for (const c of COMMANDS) await (c.startsWith('table') ? ns.exec('nft', ['-f', '-'], c) : ns.exec('nft', c.split(' ')));
  const all = await collect(stream, (seen) => seen.some((e) => e.type === 'commit' && e.generation === before + COMMANDS.length));
  const ours = all.slice(all.findIndex((e) => e.type === 'commit' && e.generation === before) + 1);
  await monitor.until((l) => l.startsWith(`# new generation ${before + COMMANDS.length} `));
  const start = monitor.lines.findIndex((l) => l.startsWith(`# new generation ${before} `));
  const theirs = theirLines(monitor.lines.slice(start + 1).join('\n'));
  t.same(monitorLines(ours), theirs);
  t.ok(theirs.length > 15, `${theirs.length} lines`);
});

t.test("the library's own commit, announced as the changes it committed: replayed elsewhere, the same ruleset", async (t) => {
  const [src, dst] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  const [from, to] = await Promise.all([openNftables(t, src), openNftables(t, dst)]);
  const stream = await from.events();
  t.teardown(() => stream.close());
  await from.commit(KP_CHANGES);
  await from.commit([{ op: 'addObject', object: { family: 'inet', table: 'kp', name: 'q', type: 'quota', bytes: 1000n } }]);
  const seen = await collect(stream, commits(2));
  const done = seen.filter((e) => e.type === 'commit');
  t.equal(done.length, 2);
  // The kernel names the committing thread: one of this process's (the addon commits from a worker).
  t.ok(existsSync(`/proc/${process.pid}/task/${(done[0] as { pid: number }).pid}`), 'a thread of this process committed');
  const changes = seen.flatMap((e) => (e.type === 'change' ? [e.change] : []));
  t.ok(changes.length >= KP_CHANGES.length, `${changes.length} changes`);
  // Appended in order elsewhere: without the handle of the rule each followed here.
  await to.commit(changes.map((c) => (c.op === 'addRule' ? { ...c, rule: { ...c.rule, position: undefined } } : c)));
  const rules = changes.flatMap((c) => (c.op === 'addRule' ? [c.rule] : []));
  t.ok(rules.slice(1).some((r) => r.position !== undefined), 'a rule after another says which');
  t.equal(await nftText(dst), await nftText(src));
});

t.test('dropped announcements are announced: a tiny buffer, a consumer that does not read, a burst', async (t) => {
  const ns = await freshNetns(t, 'nft');
  const nft = await Nftables.open({ netns: ns.path, testRcvbuf: 1 } as never);
  t.teardown(() => nft.close());
  const stream = await nft.events({ maxQueued: 1 });
  t.teardown(() => stream.close());
  const elements = Array.from({ length: 2000 }, (_, i) => `10.${i >> 8}.${i & 255}.1`).join(', ');
  await ns.exec('nft', ['-f', '-'], `table ip t { set s { type ipv4_addr; elements = { ${elements} }; }; }\n`);
  const seen = await collect(stream, (s) => s.some((e) => e.type === 'overrun'));
  t.ok(seen.some((e) => e.type === 'overrun'), 'an overrun where announcements went missing');
});

t.test('close() ends a waiting iteration; bad options are named', async (t) => {
  const ns = await freshNetns(t, 'nft');
  const nft = await openNftables(t, ns);
  await t.rejects(nft.events({ maxQueued: 0 }), { name: 'RangeError', field: 'options.maxQueued' });
  await t.rejects(nft.events({ max: 1 } as never), { name: 'TypeError', field: 'options.max' });
  const stream = await nft.events();
  const waiting = stream.next();
  stream.close();
  t.same(await waiting, { value: undefined, done: true });
  // Leaving a for-await loop closes it too.
  const again = await nft.events();
  await ns.exec('nft', ['add', 'table', 'ip', 'x']);
  for await (const e of again) {
    t.match(e, { type: 'change', change: { op: 'addTable', table: { family: 'ip', name: 'x' } } });
    break;
  }
  t.same(await again.next(), { value: undefined, done: true });
});
