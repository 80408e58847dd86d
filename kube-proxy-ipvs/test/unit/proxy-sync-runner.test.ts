/**
 * The sync runner's BoundedFrequencyRunner semantics, on a fake clock:
 * coalescing, minSyncPeriod, the periodic resync and drain, no overlap,
 * retry with backoff.
 */
import t from 'tap';
import { SyncRunner, type RunOutcome } from '../../lib/proxy/sync-runner.js';
import { FakeClock, settle } from '../support/fake-clock.js';

function setup(o: { min: number; period: number; drain?: number; slowMs?: number; failures?: number }) {
  const clock = new FakeClock();
  const runs: string[] = [];
  const outcomes: RunOutcome[] = [];
  let failures = o.failures ?? 0;
  const fn = (kind: string) => async () => {
    runs.push(`${kind}@${clock.now() - 1_000_000}`);
    if (o.slowMs) await new Promise<void>((r) => clock.setTimeout(r, o.slowMs!));
    if (failures > 0) {
      failures--;
      throw new Error('refused');
    }
  };
  const runner = new SyncRunner({
    minSyncPeriodMs: o.min,
    syncPeriodMs: o.period,
    drainPeriodMs: o.drain ?? 60_000,
    sync: fn('sync'),
    resync: fn('resync'),
    drain: fn('drain'),
    onRun: (r) => outcomes.push(r),
    clock,
  });
  runner.start();
  return { clock, runs, outcomes, runner };
}

t.test('minSyncPeriod 0: each change syncs at once; changes during a sync coalesce into one more', async (t) => {
  const { clock, runs, runner } = setup({ min: 0, period: 30_000, slowMs: 100 });
  runner.request();
  await settle();
  t.same(runs, ['sync@0'], 'first change runs at once');
  runner.request();
  runner.request();
  runner.request();
  await clock.advance(50);
  t.same(runs, ['sync@0'], 'no overlap while a sync runs');
  await clock.advance(50);
  t.same(runs, ['sync@0', 'sync@100'], 'the three changes coalesced into one sync right after');
  await clock.advance(200);
  t.same(runs, ['sync@0', 'sync@100'], 'nothing more without changes');
  await runner.stop();
});

t.test('minSyncPeriod bounds the frequency; bursts of changes become one sync per period', async (t) => {
  const { clock, runs, runner } = setup({ min: 1000, period: 30_000 });
  runner.request();
  await settle();
  for (let i = 0; i < 9; i++) {
    await clock.advance(100);
    runner.request();
  }
  await clock.advance(100);
  t.same(runs, ['sync@0', 'sync@1000'], 'nine changes within the period: one more sync, at the period boundary');
  await clock.advance(1000);
  t.same(runs, ['sync@0', 'sync@1000'], 'no change since: no sync');
  runner.request();
  await settle();
  t.same(runs, ['sync@0', 'sync@1000', 'sync@2000'], 'a change after a quiet period syncs at once');
  await runner.stop();
});

t.test('a full resync every syncPeriod, with or without changes; it covers pending changes', async (t) => {
  const { clock, runs, runner } = setup({ min: 500, period: 10_000 });
  await clock.advance(10_000);
  t.same(runs, ['resync@10000'], 'periodic resync');
  await clock.advance(9_800);
  runner.request();
  await clock.advance(100);
  t.same(runs, ['resync@10000', 'sync@19800'], 'change-driven sync');
  await clock.advance(100);
  t.same(runs, ['resync@10000', 'sync@19800'], 'the resync due at 20000 waits for minSyncPeriod');
  await clock.advance(300);
  t.same(runs, ['resync@10000', 'sync@19800', 'resync@20300'], 'then runs, not postponed further by the incremental sync');
  await clock.advance(100);
  runner.request();
  await clock.advance(400);
  t.same(runs.slice(3), ['sync@20800'], 'minSyncPeriod counts from the resync too');
  await runner.stop();
});

t.test('the graceful-termination pass runs every drain period, between syncs', async (t) => {
  const { clock, runs, runner } = setup({ min: 0, period: 1_000_000, drain: 60_000 });
  await clock.advance(60_000);
  await clock.advance(60_000);
  t.same(runs, ['drain@60000', 'drain@120000']);
  await runner.stop();
});

t.test('a failed sync is retried as a resync, with backoff', async (t) => {
  const { clock, runs, outcomes, runner } = setup({ min: 0, period: 60_000, failures: 3 });
  runner.request();
  await clock.advance(0);
  t.same(runs, ['sync@0']);
  t.match(outcomes[0], { kind: 'sync', error: { message: 'refused' } });
  await clock.advance(999);
  t.same(runs, ['sync@0'], 'no busy retry');
  await clock.advance(1);
  t.same(runs, ['sync@0', 'resync@1000'], 'retried after 1 s, as a resync');
  await clock.advance(2000);
  t.same(runs, ['sync@0', 'resync@1000', 'resync@3000'], 'then after 2 s');
  await clock.advance(4000);
  t.same(runs, ['sync@0', 'resync@1000', 'resync@3000', 'resync@7000'], 'then after 4 s, and it succeeds');
  runner.request();
  await settle();
  t.same(runs.at(-1), 'sync@7000', 'back to normal: changes sync at once');
  await runner.stop();
});

t.test('stop() waits for the run in progress and cancels the timers', async (t) => {
  const { clock, runs, runner } = setup({ min: 0, period: 10_000, slowMs: 100 });
  runner.request();
  await settle();
  let stopped = false;
  const p = runner.stop().then(() => (stopped = true));
  await settle();
  t.notOk(stopped, 'waits for the sync');
  await clock.advance(100);
  await p;
  t.ok(stopped);
  t.equal(clock.pending(), 0, 'no timer left');
  runner.request();
  await clock.advance(20_000);
  t.same(runs, ['sync@0'], 'nothing runs after stop');
});
