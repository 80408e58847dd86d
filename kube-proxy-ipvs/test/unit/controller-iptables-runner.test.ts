// IptablesRunner reads back what it wrote (one iptables-save) after apply()
// has returned, so a sync ends when the rules are in the kernel. These
// tests hold that read-back open and check that nothing depends on it
// having finished: holds(), a second apply() and cleanup() wait for it, and
// no two programs for one family ever run at once. The kernel's tables are
// a small fake (the real tools are covered by the kernel tests).
import t from 'tap';

import type { Exec, ExecResult } from '../../lib/kernel/exec.js';
import { DEFAULT_IPTABLES, IptablesRunner } from '../../lib/kernel/iptables-runner.js';

const PAYLOAD = ['*nat', ':KUBE-SERVICES - [0:0]', '-A KUBE-SERVICES -m comment --comment "one" -j RETURN', 'COMMIT', ''].join('\n');
const OTHER = ['*nat', ':KUBE-SERVICES - [0:0]', '-A KUBE-SERVICES -m comment --comment "two" -j RETURN', 'COMMIT', ''].join('\n');

/** Tables as iptables-save prints them: per table, chains in order with their rules. */
class FakeTables {
  readonly tables = new Map<string, Map<string, string[]>>();
  /** Programs started, in order ("save", "restore"). */
  readonly started: string[] = [];
  /** How many run right now, and the most that ever ran at once. */
  running = 0;
  maxRunning = 0;
  /** Per program, gates its next calls wait on before they answer (the test opens them). */
  private readonly gates = new Map<string, Array<Promise<void>>>();
  /** Answers with exit code 1 instead, for the next call of this program. */
  failNext?: string;

  /** The next call of `program` not yet given a gate waits until the returned function is called. */
  hold(program: 'save' | 'restore'): () => void {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    this.gates.set(program, [...(this.gates.get(program) ?? []), gate]);
    return release;
  }

  readonly exec: Exec = async (file, _args, input) => {
    const program = file === DEFAULT_IPTABLES.inet.save ? 'save' : file === DEFAULT_IPTABLES.inet.restore ? 'restore' : file;
    this.started.push(program);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      const gate = this.gates.get(program)?.shift();
      if (gate) await gate;
      else await Promise.resolve();
      if (this.failNext === program) {
        this.failNext = undefined;
        return { code: 1, stdout: '', stderr: 'simulated failure' };
      }
      if (program === 'restore') this.restore(input ?? '');
      return { code: 0, stdout: program === 'save' ? this.save() : '', stderr: '' } satisfies ExecResult;
    } finally {
      this.running--;
    }
  };

  /** `--noflush`: a chain declared is created or emptied; -A appends, -I inserts first. */
  private restore(input: string): void {
    let table: Map<string, string[]> | undefined;
    for (const line of input.split('\n')) {
      if (line.startsWith('*')) {
        const name = line.slice(1);
        if (!this.tables.has(name)) this.tables.set(name, new Map());
        table = this.tables.get(name);
      } else if (line.startsWith(':')) table!.set(line.slice(1).split(' ')[0], []);
      else if (line.startsWith('-A ') || line.startsWith('-I ')) {
        const chain = line.split(' ')[1];
        const rules = table!.get(chain) ?? [];
        table!.set(chain, rules);
        const rule = `-A ${line.slice(3)}`;
        if (line.startsWith('-A ')) rules.push(rule);
        else rules.unshift(rule);
      }
    }
  }

  save(): string {
    const out: string[] = [];
    for (const [name, chains] of this.tables) {
      out.push(`*${name}`, ...[...chains.keys()].map((c) => `:${c} - [0:0]`));
      for (const rules of chains.values()) out.push(...rules);
      out.push('COMMIT');
    }
    return out.join('\n') + '\n';
  }

  /** Someone else's edit: one more rule in a chain. */
  append(table: string, chain: string, rule: string): void {
    this.tables.get(table)!.get(chain)!.push(`-A ${chain} ${rule}`);
  }
}

/** Lets every pending promise callback run. */
const ticks = async (n = 20) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

/** A runner that has written PAYLOAD, with its read-back still running until `readBack()`. */
async function writtenWithReadBackHeld(): Promise<{ k: FakeTables; runner: IptablesRunner; readBack: () => void }> {
  const k = new FakeTables();
  const runner = new IptablesRunner(k.exec);
  k.hold('save')(); // the first save, apply()'s look at the jumps, answers at once
  const readBack = k.hold('save'); // the second, the read-back, waits
  await runner.apply('inet', PAYLOAD);
  return { k, runner, readBack };
}

t.test('apply() returns once the restore has run, without waiting for the read-back', async (t) => {
  const { k, runner, readBack } = await writtenWithReadBackHeld();
  t.same(k.started, ['save', 'restore', 'save'], 'the read-back has started');
  t.equal(k.running, 1, 'and is still running when apply() returns');
  t.match(k.save(), /-A KUBE-SERVICES -m comment --comment "one" -j RETURN/, 'the rules are in the kernel');
  t.match(k.save(), /-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES/, 'with the jumps that were missing');

  let answered: boolean | undefined;
  const holds = runner.holds('inet', PAYLOAD).then((h) => (answered = h));
  await ticks();
  t.equal(answered, undefined, 'holds() waits for the read-back');
  t.same(k.started, ['save', 'restore', 'save'], 'and starts nothing of its own meanwhile');
  readBack();
  await holds;
  t.equal(answered, true, 'then compares against it: the kernel holds what was written');
  t.equal(k.maxRunning, 1, 'never two programs at once');
});

t.test('holds() is false for another payload, and once someone edits our chains', async (t) => {
  const k = new FakeTables();
  const runner = new IptablesRunner(k.exec);
  await runner.apply('inet', PAYLOAD);
  t.equal(await runner.holds('inet', OTHER), false, 'another payload was never written');
  t.equal(await runner.holds('inet', PAYLOAD), true);
  k.append('nat', 'KUBE-SERVICES', '-j ACCEPT');
  t.equal(await runner.holds('inet', PAYLOAD), false, 'an edited chain is written again');
});

t.test('a second apply() waits for the first one\'s read-back', async (t) => {
  const { k, runner, readBack } = await writtenWithReadBackHeld();
  const second = runner.apply('inet', OTHER);
  await ticks();
  t.same(k.started, ['save', 'restore', 'save'], 'nothing new starts while the read-back runs');
  readBack();
  await second;
  await runner.settled('inet');
  t.same(k.started, ['save', 'restore', 'save', 'save', 'restore', 'save']);
  t.equal(k.maxRunning, 1, 'never two programs at once');
  t.equal(await runner.holds('inet', OTHER), true, 'the second write is what is recorded');
  t.equal(await runner.holds('inet', PAYLOAD), false);
});

t.test('a read-back that fails records nothing: the next resync writes again', async (t) => {
  const { k, runner, readBack } = await writtenWithReadBackHeld();
  k.failNext = 'save';
  readBack();
  t.equal(await runner.holds('inet', PAYLOAD), false);
});

t.test('cleanup() waits for the read-back, then finds the chains it has to remove', async (t) => {
  const { k, runner, readBack } = await writtenWithReadBackHeld();
  const cleanup = runner.cleanup('inet');
  await ticks();
  t.same(k.started, ['save', 'restore', 'save'], 'cleanup waits');
  readBack();
  await cleanup;
  t.same(k.started, ['save', 'restore', 'save', 'save', 'restore']);
  t.equal(await runner.holds('inet', PAYLOAD), false, 'nothing is recorded after a cleanup');
});
