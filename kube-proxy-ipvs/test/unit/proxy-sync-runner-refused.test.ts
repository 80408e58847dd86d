/**
 * The sync runner after a run that went through with some operations
 * refused (the `incomplete` hook says so): a resync retries them after the
 * same backoff as a failure, but syncs of new changes are not held back
 * meanwhile, as kube-proxy goes on syncing after an ipset or IPVS failure.
 */
import t from 'tap';
import { SyncRunner, type RunOutcome } from '../../lib/proxy/sync-runner.js';
import { FakeClock, settle } from '../support/fake-clock.js';

/** A runner whose every run ends as `outcome(kind, index)` says: one operation refused, done, or thrown. */
function scripted(o: { min: number; period: number }, outcome: (kind: string, i: number) => 'refused' | 'done' | 'failed') {
  const clock = new FakeClock();
  const runs: string[] = [];
  const outcomes: RunOutcome[] = [];
  const fn = (kind: string) => async () => {
    const i = runs.length;
    runs.push(`${kind}@${clock.now() - 1_000_000}`);
    const how = outcome(kind, i);
    if (how === 'failed') throw new Error('the rules restore failed');
    return { failed: how === 'refused' ? 1 : 0 };
  };
  const runner = new SyncRunner({
    minSyncPeriodMs: o.min,
    syncPeriodMs: o.period,
    sync: fn('sync'),
    resync: fn('resync'),
    drain: fn('drain'),
    incomplete: (result) => (result as { failed: number }).failed > 0,
    onRun: (r) => outcomes.push(r),
    clock,
  });
  runner.start();
  return { clock, runs, outcomes, runner };
}

/** The first `refusals` runs each have an operation refused; the rest go through. */
function setup(o: { min: number; period: number; refusals: number }) {
  return scripted(o, (_kind, i) => (i < o.refusals ? 'refused' : 'done'));
}

t.test('a run with refused operations is no failure: its outcome has no error, and a resync retries them with backoff', async (t) => {
  const { clock, runs, outcomes, runner } = setup({ min: 0, period: 60_000, refusals: 2 });
  runner.request();
  await settle();
  t.same(runs, ['sync@0']);
  t.match(outcomes[0], { kind: 'sync', error: undefined, result: { failed: 1 } }, 'no error: the proxy counts it as done');
  await clock.advance(999);
  t.same(runs, ['sync@0'], 'no busy retry');
  await clock.advance(1);
  t.same(runs, ['sync@0', 'resync@1000'], 'retried after 1 s, as a resync');
  await clock.advance(2000);
  t.same(runs, ['sync@0', 'resync@1000', 'resync@3000'], 'then after 2 s, and it goes through');
  await clock.advance(60_000);
  t.same(runs.slice(3).filter((r) => !r.startsWith('drain')), ['resync@63000'], 'then only the periodic resync');
  await runner.stop();
});

t.test('meanwhile new changes sync as usual; they do not postpone the retry', async (t) => {
  const { clock, runs, runner } = setup({ min: 100, period: 60_000, refusals: 4 });
  runner.request();
  await settle();
  t.same(runs, ['sync@0']);
  await clock.advance(300);
  runner.request();
  await settle();
  t.same(runs, ['sync@0', 'sync@300'], 'a change syncs at once, not after the retry\'s backoff');
  await clock.advance(300);
  runner.request();
  await settle();
  t.same(runs.at(-1), 'sync@600', 'and the next one too, though it also had an operation refused');
  await clock.advance(400);
  t.same(runs.at(-1), 'resync@1000', 'the retry keeps its time (1 s after the first refusal)');
  await runner.stop();
});

t.test('a failed run still holds everything back until its retry', async (t) => {
  const clock = new FakeClock();
  const runs: string[] = [];
  let failures = 1;
  const fn = (kind: string) => async () => {
    runs.push(`${kind}@${clock.now() - 1_000_000}`);
    if (failures-- > 0) throw new Error('iptables-restore failed');
    return { failed: 0 };
  };
  const runner = new SyncRunner({ minSyncPeriodMs: 0, syncPeriodMs: 60_000, sync: fn('sync'), resync: fn('resync'), drain: fn('drain'), incomplete: (r) => (r as { failed: number }).failed > 0, clock });
  runner.start();
  runner.request();
  await settle();
  await clock.advance(300);
  runner.request();
  await clock.advance(699);
  t.same(runs, ['sync@0'], 'the change waits for the retry');
  await clock.advance(1);
  t.same(runs, ['sync@0', 'resync@1000'], 'which covers it');
  await runner.stop();
});

t.test('a failure after refusals: nothing runs before the resync that repairs it', async (t) => {
  // Refusals back the retry off to 8 s; then a change syncs, and the next one fails.
  const script = ['refused', 'refused', 'refused', 'refused', 'done', 'failed'] as const;
  const { clock, runs, runner } = scripted({ min: 0, period: 60_000 }, (_k, i) => script[i] ?? 'done');
  runner.request();
  await settle();
  await clock.advance(7000);
  t.same(runs, ['sync@0', 'resync@1000', 'resync@3000', 'resync@7000']);
  await clock.advance(100);
  runner.request();
  await settle();
  await clock.advance(100);
  runner.request();
  await settle();
  t.same(runs.slice(4), ['sync@7100', 'sync@7200'], 'a change synced, the next failed');
  runner.request(); // another change, while the failure waits
  await clock.advance(30_000);
  t.equal(runs[6]?.split('@')[0], 'resync', `the run after the failure is the resync that repairs it (${runs[6]})`);
  await runner.stop();
});

t.test('a refusal that never clears backs off while changes keep syncing', async (t) => {
  // The first sync meets the refusal; every resync meets it again; the syncs of new changes go through.
  const { clock, runs, runner } = scripted({ min: 0, period: 60_000 }, (kind, i) => (i === 0 || kind === 'resync' ? 'refused' : 'done'));
  runner.request();
  await settle();
  for (let at = 500; at <= 15_000; at += 500) {
    await clock.advance(500);
    runner.request();
    await settle();
  }
  const resyncs = runs.filter((r) => r.startsWith('resync')).map((r) => Number(r.split('@')[1]));
  t.ok(resyncs.length >= 2, `resyncs at ${resyncs.join(', ')}`);
  const gaps = resyncs.slice(1).map((at, i) => at - resyncs[i]);
  t.ok(gaps.every((g, i) => i === 0 || g > gaps[i - 1]), `the gaps between retries grow: ${gaps.join(', ')}`);
  await runner.stop();
});
