/**
 * A yardstick: the ipset project's own regression tests (`tests/*.t` of its
 * source) fed through the library and compared with the ipset tool.
 *
 *   node --import=./node_modules/@tapjs/typescript/dist/esm/import.mjs \
 *     test/upstream/ipset-yardstick.ts run [--only FILE.t]... [--jobs N] [--out REPORT.json]
 *   ... ipset-yardstick.ts extract IPSET-SOURCE-DIR   (refreshes the fixture)
 *
 * The commands come from test/fixtures/ipset-upstream/cases.json (see its
 * README: where they came from, under which licence). Each test file runs
 * in two fresh network namespaces: the tool in one, the library (through
 * ipset-cli.ts) in the other, command by command. A command passes when
 * the library's outcome (success, failure, a test's answer) is the tool's
 * and `ipset save` of the two namespaces then agrees (initval aside,
 * remaining timeouts within 3 s plus what the two sides' commands and reads
 * were measured to lie apart, an element that close to expiry allowed to be
 * gone on one side); a list or save also when what the library
 * read is what the tool saves (entries, and the header fields of the create
 * line). After a disagreement the library's namespace is reset to the
 * tool's, so each command is judged on its own. Their expected exit status
 * is reported too: how often the tool itself, on this kernel, does what
 * their test expects. A line that calls ipset inside a shell construct (a
 * loop, a subshell, `&&`) runs as written in both namespaces, the library's
 * `ipset` there being ipset-lib-cli.ts. Commands whose input is one of their scripts or files
 * (not kept here), and lines that are not ipset commands (their diff.sh,
 * iptables and traffic checks), are counted apart.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { Ipset } from '../../lib/ipset/index.js';
import { fieldsOf } from '../support/ipset-tool.js';
import { createNetns, deleteNetns, type Netns } from '../support/netns.js';
import { execute, parse, saveText, words, type Outcome, type Parsed } from './ipset-cli.js';
import { libraryOnPath, shell } from './netns-shell.js';
import { normalSave, sameSave } from './save-compare.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = path.join(here, '../fixtures/ipset-upstream/cases.json');
const run = promisify(execFile);

interface Cases {
  source: string;
  files: Array<{ name: string; lines: Array<[number, string, string]> }>;
}

/** `expiry`: the outcomes differ, decided by an element expiring between the two sides' commands. */
type Verdict = 'pass' | 'fail' | 'expiry' | 'untranslated' | 'other';
interface Result {
  file: string;
  line: number;
  cmd: string;
  verdict: Verdict;
  why?: string;
  /** Their expected exit status, the tool's, the library's. */
  expected?: number;
  tool?: number;
  ours?: number;
}

// --- extract: their .t files, in runtest.sh's order, to the fixture ---

function extract(dir: string): void {
  const runtest = readFileSync(path.join(dir, 'tests/runtest.sh'), 'utf8');
  const names: string[] = [];
  for (const m of runtest.matchAll(/^tests="(?:\$tests )?([^"]*)"/gm)) names.push(...m[1].split(/\s+/).filter(Boolean));
  const version = /AC_INIT\(\[ipset\], \[([^\]]+)\]/.exec(readFileSync(path.join(dir, 'configure.ac'), 'utf8'))?.[1] ?? '?';
  const files: Cases['files'] = [];
  for (const n of names) {
    const name = n.endsWith('.t') ? n : `${n}.t`;
    const text = readFileSync(path.join(dir, 'tests', name), 'utf8');
    const lines: Array<[number, string, string]> = [];
    text.split('\n').forEach((l, i) => {
      const m = /^(\S+)\s+(.*)$/.exec(l);
      if (m) lines.push([i + 1, m[1], m[2]]);
    });
    files.push({ name, lines });
  }
  const cases: Cases = { source: `ipset ${version}, tests/*.t in the order of tests/runtest.sh (git.netfilter.org/ipset; GPL-2.0-only)`, files };
  writeFileSync(FIXTURE, JSON.stringify(cases, null, 0).replace(/\],\[/g, '],\n[') + '\n');
  console.log(`${files.length} files, ${files.reduce((n, f) => n + f.lines.length, 0)} lines -> ${FIXTURE}`);
}

// --- run ---

const MUTATING = new Set(['create', 'add', 'del', 'destroy', 'flush', 'rename', 'swap', 'restore']);
/** Their generator scripts, which this repository does not keep. */
const THEIR_INPUT = /\.\/[\w.-]+\.sh/;

class FileRun {
  private ipset!: Ipset;
  /** The library reading the tool's namespace, for the evidence of an expiry (never to judge the tool). */
  private reader!: Ipset;
  private readonly files: Record<'a' | 'b', string>;
  readonly results: Result[] = [];
  /** The longest a command and the reads that judge it have taken in this file, in ms. */
  private longest = 0;

  constructor(
    private readonly name: string,
    private readonly a: Netns,
    private readonly b: Netns,
    dir: string,
    private readonly libraryBin: string,
  ) {
    this.files = { a: path.join(dir, 'a'), b: path.join(dir, 'b') };
  }

  async start(): Promise<void> {
    for (const d of Object.values(this.files)) rmSync(d, { recursive: true, force: true });
    for (const d of Object.values(this.files)) await run('mkdir', ['-p', d]);
    this.ipset = await Ipset.open({ netns: this.b.path });
    this.reader = await Ipset.open({ netns: this.a.path });
  }

  close(): void {
    this.ipset.close();
    this.reader.close();
  }

  /** Each namespace's elements of `set` and their remaining timeouts (the tool's first), read in-process at once. */
  private async timeouts(set: string): Promise<Array<Map<string, number>>> {
    const read = (ipset: Ipset) => ipset.list(set).then((l) => l.entries, () => [] as string[]);
    const lists = await Promise.all([read(this.reader), read(this.ipset)]);
    return lists.map((entries) => new Map(entries.map((e) => [e.replace(/ timeout \d+/, ''), Number(/ timeout (\d+)/.exec(e)?.[1] ?? 0)])));
  }

  /** Before an element command on a set with timeouts: its elements in both namespaces, for expiring(). */
  private async before(p: Parsed): Promise<Array<Map<string, number>> | undefined> {
    if (!['add', 'del', 'test'].includes(p.cmd) || !p.args[0]) return undefined;
    const header = await this.ipset.header(p.args[0]).catch(() => undefined);
    return header?.timeout === undefined ? undefined : this.timeouts(p.args[0]);
  }

  /**
   * Evidence that a disagreement was decided by an element expiring between
   * the two sides' commands: right after it, an element of `set` with at most
   * `slack` seconds left in one namespace and gone (or as close to going) in
   * the other; or, read just before the command, one with at most `slack`
   * seconds left. The library reads both namespaces for this, never to judge
   * the tool.
   */
  private async expiring(set: string, slack: number, before?: Array<Map<string, number>>): Promise<string | undefined> {
    const [tool, ours] = await this.timeouts(set);
    for (const [side, mine, other] of [['the tool', tool, ours], ['the library', ours, tool]] as const)
      for (const [element, left] of mine)
        if (left >= 1 && left <= slack && (!other.has(element) || other.get(element)! <= slack))
          return `${element} has ${left} s left in ${side}'s namespace, ${other.has(element) ? `${other.get(element)} s` : 'gone'} in the other`;
    for (const [side, mine] of [['the tool', before?.[0]], ['the library', before?.[1]]] as const)
      for (const [element, left] of mine ?? [])
        if (left >= 1 && left <= slack) return `${element} had ${left} s left in ${side}'s namespace just before`;
    return undefined;
  }

  /** The library's namespace made the tool's again, and a fresh handle. */
  private async resync(): Promise<void> {
    const save = (await shell(this.a, this.files.a, 'ipset save')).stdout;
    await shell(this.b, this.files.b, 'ipset destroy');
    await shell(this.b, this.files.b, 'ipset restore', save);
    this.ipset.close();
    this.ipset = await Ipset.open({ netns: this.b.path });
  }

  private record(r: Result): void {
    this.results.push(r);
    if (process.env.YARDSTICK_VERBOSE || ((r.verdict === 'fail' || r.verdict === 'expiry') && process.env.YARDSTICK_SHOW_FAILS)) console.log(`${r.verdict} ${this.name}:${r.line} ${r.cmd}${r.why ? ` -- ${r.why}` : ''}`);
  }

  async line(n: number, expect: string, line: string): Promise<void> {
    let cmd = line;
    if (expect === '#' || expect === 'skip') return;
    // Their sleeps ("sleep 5", "sleep 2s", "sleep .1s; ipset list > .foo"), on both sides at once.
    const sleep = /^sleep (\d*\.?\d+)s?(?:\s*;\s*(.*))?$/.exec(cmd);
    if (sleep) {
      await new Promise((r) => setTimeout(r, Number(sleep[1]) * 1000));
      if (sleep[2] === undefined) return;
      cmd = sleep[2];
    }
    const base = { file: this.name, line: n, cmd: line, expected: Number(expect) };
    const at = cmd.search(/(?<=^|[\s`|;(])ipset(?=\s|$)/);
    if (at < 0) return this.record({ ...base, verdict: 'other' });
    const head = cmd.slice(0, at).trim();
    if (THEIR_INPUT.test(head)) return this.record({ ...base, verdict: 'untranslated', why: 'its input comes from their script' });
    const { words: argv, rest } = words(cmd.slice(at + 'ipset'.length));
    const p = parse(argv);
    const construct = () => (THEIR_INPUT.test(cmd) ? this.record({ ...base, verdict: 'untranslated', why: 'it runs their script' }) : this.construct(base, cmd));
    // What surrounds the command: a generator piping restore input in, a
    // check on its output (grep, wc, test), an output or input file.
    let input: string | undefined;
    const check = head === 'n=`' || head === 'ref=`' || rest.startsWith('|');
    if (head !== '' && !check) {
      if (!head.endsWith('|') || /ipset/.test(head)) return construct();
      input = (await shell(this.a, this.files.a, head.slice(0, -1))).stdout;
    }
    const quiet = /^([12]?>\s*\/dev\/null\s*|2>&1\s*)+$/.test(rest);
    const toFile = quiet ? undefined : /^>\s*(\S+)/.exec(rest)?.[1];
    const fromFile = /^<\s*(\S+)/.exec(rest)?.[1] ?? (!('error' in p) && p.cmd === 'restore' && typeof p.env.file === 'string' ? p.env.file : undefined);
    if (!check && !toFile && !fromFile && rest !== '' && !quiet) return construct();
    if (fromFile !== undefined) {
      if (!existsSync(path.join(this.files.a, fromFile))) return this.record({ ...base, verdict: 'untranslated', why: `input from their file ${fromFile}` });
      input = readFileSync(path.join(this.files.a, fromFile), 'utf8');
    }
    // The tool (the command alone, then for a check their whole line) and
    // the library at once, so that timeouts tick alike on both sides.
    const quoted = argv.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(' ');
    const oursInput = fromFile !== undefined && existsSync(path.join(this.files.b, fromFile)) ? readFileSync(path.join(this.files.b, fromFile), 'utf8') : input;
    const earlier = 'error' in p ? undefined : await this.before(p);
    const began = performance.now();
    let toolStarted!: () => void;
    const ready = new Promise<void>((r) => (toolStarted = r));
    const [tool, ours] = await Promise.all([
      shell(this.a, this.files.a, `ipset ${quoted}`, input, toolStarted),
      'error' in p ? Promise.resolve<Outcome>({ code: 1, error: p.error }) : ready.then(() => execute(this.ipset, p, oursInput)),
    ]);
    if (toFile) writeFileSync(path.join(this.files.a, toFile), tool.stdout);
    const toolCheck = check ? (await shell(this.a, this.files.a, cmd)).code : tool.code;
    if (toFile && ours.listed) writeFileSync(path.join(this.files.b, toFile), [...ours.listed].map(([name, s]) => saveText(name, s)).join(''));
    let why: string | undefined;
    if ((tool.code === 0) !== (ours.code === 0)) why = `the tool exited ${tool.code}, the library ${ours.code}${ours.error ? ` (${ours.error})` : ''}`;
    if (!why && !('error' in p)) why = await this.compare(p, ours, check ? cmd : undefined, toolCheck, began);
    const expiry = why && !('error' in p) && ['add', 'del', 'test', 'list', 'save'].includes(p.cmd) && p.args[0] ? await this.expiring(p.args[0], this.slack(began), earlier) : undefined;
    if (expiry) why = `${why}: ${expiry}`;
    const verdict: Verdict = expiry ? 'expiry' : why ? 'fail' : 'pass';
    this.record({ ...base, verdict, tool: toolCheck, ours: ours.code === 0 && check ? toolCheck : ours.code, ...(why ? { why } : {}) });
    if (why) await this.resync();
  }

  /**
   * A line with ipset inside a shell construct (a loop, a subshell, `&&`):
   * the line as written, by bash, in both namespaces at once, the tool's
   * ipset in one and the library's (ipset-lib-cli.ts first on PATH) in the
   * other. It passes when both exit alike and `ipset save` then agrees.
   */
  private async construct(base: Omit<Result, 'verdict'>, cmd: string): Promise<void> {
    const began = performance.now();
    const [tool, ours] = await Promise.all([shell(this.a, this.files.a, cmd), shell(this.b, this.files.b, cmd, undefined, undefined, this.libraryBin)]);
    let why = (tool.code === 0) !== (ours.code === 0) ? `the tool's run exited ${tool.code}, the library's ${ours.code}` : undefined;
    if (!why) {
      const [sa, sb] = await Promise.all([shell(this.a, this.files.a, 'ipset save'), shell(this.b, this.files.b, 'ipset save')]);
      const d = sameSave(normalSave(sa.stdout, false), normalSave(sb.stdout, false), this.slack(began));
      if (d) why = `the sets differ after it: ${d}`;
    }
    this.record({ ...base, verdict: why ? 'fail' : 'pass', tool: tool.code, ours: ours.code, ...(why ? { why } : {}) });
    if (why) await this.resync();
  }

  /**
   * How far remaining timeouts may differ between the namespaces, in
   * seconds: 3, plus what the two sides' adds and reads can lie apart. Each
   * side acts and reads within the span from a command's start to its reads'
   * end, so an element's two timeouts differ by at most the span it was
   * added in plus the span it is read in: twice the longest span so far
   * (milliseconds on an idle machine, seconds on a loaded one).
   */
  private slack(began: number): number {
    this.longest = Math.max(this.longest, performance.now() - began);
    return 3 + Math.ceil((2 * this.longest) / 1000);
  }

  /** The states agree after a change; a listing reads what the tool saves; their checks on it agree. */
  private async compare(p: Parsed, ours: Outcome, check: string | undefined, toolCode: number, began: number): Promise<string | undefined> {
    if (MUTATING.has(p.cmd)) {
      const [sa, sb] = await Promise.all([shell(this.a, this.files.a, 'ipset save'), shell(this.b, this.files.b, 'ipset save')]);
      const sizes = p.cmd === 'create';
      const d = sameSave(normalSave(sa.stdout, sizes), normalSave(sb.stdout, sizes), this.slack(began));
      if (d) return `the sets differ after it: ${d}`;
    }
    if (ours.listed) {
      const saved = (await shell(this.a, this.files.a, 'ipset save')).stdout.split('\n');
      const slack = this.slack(began);
      for (const [name, s] of ours.listed) {
        const create = saved.find((l) => l.startsWith(`create ${name} `));
        if (!create) return `the library listed ${name}, the tool has no such set`;
        if (s.entries) {
          const theirs = saved.filter((l) => l.startsWith(`add ${name} `)).map((l) => l.slice(`add ${name} `.length));
          const d = sameSave(theirs.sort(), [...s.entries].sort(), slack);
          if (d) return `${name}: list() is not what the tool saves: ${d}`;
        }
        if (s.type) {
          // Two namespaces' hash seeds differ, and so may the sizes their sets grew to.
          const { initval: _initval, hashSize: _hashSize, ...want } = fieldsOf(create.slice(`create ${name} `.length));
          for (const [k, v] of Object.entries(want)) if ((s as unknown as Record<string, unknown>)[k] !== v) return `${name}: header ${k} is ${String((s as unknown as Record<string, unknown>)[k])}, the tool says ${String(v)}`;
        }
      }
    }
    // Their own check (grep, wc) run on the state the library made.
    if (check) {
      const mine = await shell(this.b, this.files.b, check);
      if (mine.code !== toolCode) return `their check: ${toolCode} on the tool's sets, ${mine.code} on the library's`;
    }
    return undefined;
  }
}

/** One test file, start to end, in its own two namespaces and folder. */
async function runFile(f: Cases['files'][number], dir: string, libraryBin: string): Promise<Result[]> {
  const started = Date.now();
  const a = await createNetns('ysa');
  const b = await createNetns('ysb');
  const r = new FileRun(f.name, a, b, path.join(dir, f.name), libraryBin);
  try {
    await r.start();
    for (const [n, expect, cmd] of f.lines) {
      if (expect === '#' && cmd === 'eof') break; // runtest.sh stops there
      await r.line(n, expect, cmd);
    }
  } finally {
    r.close();
    await deleteNetns(a);
    await deleteNetns(b);
  }
  const count = (v: Verdict) => r.results.filter((x) => x.verdict === v).length;
  const took = ((Date.now() - started) / 1000).toFixed(0);
  // Where the kernel lacks the file's set type, the tool fails where their test expects success.
  const judged = r.results.filter((x) => x.verdict === 'pass' || x.verdict === 'fail' || x.verdict === 'expiry');
  const asExpected = judged.filter((x) => (x.tool === 0) === (x.expected === 0)).length;
  console.log(`${f.name}: ${count('pass')} pass, ${count('fail')} fail, ${count('expiry')} decided by expiry, ${count('untranslated')} untranslated, ${count('other')} other lines; the tool as their test expects ${asExpected}/${judged.length} (${took} s)`);
  return r.results;
}

/**
 * Every file (or one), `jobs` at a time: a file's time is mostly its own
 * sleeps and the tool's start-up, so files run side by side, each in its own
 * namespaces, tick alike. The report keeps their runtest.sh order.
 */
async function runAll(only: string[], out: string | undefined, jobs: number): Promise<void> {
  const cases = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Cases;
  const dir = mkdtempSync(path.join(tmpdir(), 'ipset-yardstick-'));
  const unknown = only.filter((n) => !cases.files.some((f) => f.name === n));
  if (unknown.length) throw new Error(`no such test file: ${unknown.join(', ')} (their names are in ${FIXTURE})`);
  const files = cases.files.filter((f) => only.length === 0 || only.includes(f.name));
  const byFile: Result[][] = [];
  const libraryBin = libraryOnPath(dir);
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const i = next++;
      byFile[i] = await runFile(files[i], dir, libraryBin);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, files.length)) }, worker));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  report(byFile.flat(), cases.source, out);
}

function report(results: Result[], source: string, out: string | undefined): void {
  const by = (v: Verdict) => results.filter((r) => r.verdict === v);
  const judged = [...by('pass'), ...by('fail'), ...by('expiry')];
  const toolOk = judged.filter((r) => (r.tool === 0) === (r.expected === 0));
  const bothOk = toolOk.filter((r) => r.verdict === 'pass');
  console.log(`\n${source}, on Linux ${readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim()}`);
  console.log(`${judged.length + by('untranslated').length} ipset commands: ${judged.length} run, ${by('untranslated').length} not translated; ${by('other').length} other lines`);
  console.log(`agree with the tool (outcome, and the sets after): ${by('pass').length} of ${judged.length}`);
  console.log(`disagree: ${by('fail').length}; and ${by('expiry').length} decided by an element expiring between the two sides' commands`);
  console.log(`do what their test expects: the tool ${toolOk.length}, the library (agreeing with the tool) ${bothOk.length}`);
  const reasons = new Map<string, number>();
  for (const r of [...by('fail'), ...by('expiry'), ...by('untranslated')]) {
    const k = `${r.verdict}: ${(r.why ?? '').replace(/\d+(\.\d+)*/g, 'N').slice(0, 90)}`;
    reasons.set(k, (reasons.get(k) ?? 0) + 1);
  }
  for (const [k, n] of [...reasons].sort((x, y) => y[1] - x[1])) console.log(`  ${n}\t${k}`);
  if (out) writeFileSync(out, JSON.stringify({ source, kernel: readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim(), results }, null, 1) + '\n');
}

const [mode, arg, ...more] = process.argv.slice(2);
if (mode === 'extract' && arg) extract(arg);
else if (mode === 'run') {
  const all = [arg, ...more];
  const opt = (k: string) => {
    const i = all.indexOf(k);
    return i >= 0 ? all[i + 1] : undefined;
  };
  const jobs = Number(opt('--jobs') ?? 1);
  if (!Number.isInteger(jobs) || jobs < 1) {
    console.error(`--jobs takes a whole number of files at once, 1 or more (got ${opt('--jobs')})`);
    process.exit(2);
  }
  const only = all.flatMap((w, i) => (w === '--only' && all[i + 1] !== undefined ? [all[i + 1]] : []));
  await runAll(only, opt('--out'), jobs);
} else {
  console.error('usage: ipset-yardstick.ts run [--only FILE.t]... [--jobs N] [--out REPORT.json] | extract IPSET-SOURCE-DIR');
  process.exit(2);
}
