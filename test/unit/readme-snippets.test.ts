// The README's TypeScript examples, compiled as a user's strict program
// would compile them against the library: a renamed method, a changed
// option or result shape fails here instead of going stale on the page.
// Each ```ts block is its own module; the few names a block leaves to its
// reader (the entries to load, the addresses still serving) are declared
// for it below, and a block that needs a name not listed there fails too.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
// As the declaration tests: the compiler runs without the sanitizer run's preloaded runtime.
const { LD_PRELOAD: _preload, ASAN_OPTIONS: _asan, LSAN_OPTIONS: _lsan, UBSAN_OPTIONS: _ubsan, ...plainEnv } = process.env;

/** The names a block uses without defining them, as its prose explains them. */
const GIVEN: Record<string, string> = {
  entries: 'declare const entries: string[];',
  serving: 'declare const serving: Set<string>;',
  resync: 'declare function resync(): void;',
};

/** Each ```ts block of the file, with the line it starts on. */
function tsBlocks(markdown: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```ts') continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== '```') end++;
    blocks.push({ line: start + 1, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

t.test("the README's TypeScript examples compile against the library", async (t) => {
  const blocks = tsBlocks(readFileSync(path.join(root, 'README.md'), 'utf8'));
  t.ok(blocks.length >= 5, `the README has its examples (${blocks.length} blocks)`);
  const dir = mkdtempSync(path.join(tmpdir(), 'readme-snippets-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files = blocks.map(({ line, code }) => {
    // Given where the block uses the name and declares none of that name itself (`{ entries: listed }` declares listed).
    const given = Object.keys(GIVEN)
      .filter((name) => new RegExp(`\\b${name}\\b`).test(code) && !new RegExp(`\\b(const|let|var|function)\\s[^=;(]*\\b${name}\\b(?!\\s*:)`).test(code))
      .map((name) => GIVEN[name]);
    // .mts: an ES module whatever package.json is near, so the blocks' top-level await is allowed.
    const file = path.join(dir, `readme-line-${line}.mts`);
    writeFileSync(file, `${code}\n${given.join('\n')}\n`);
    return file;
  });
  const config = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      allowImportingTsExtensions: true,
      lib: ['ES2022'],
      types: ['node'],
      typeRoots: [path.join(root, 'node_modules/@types')],
      // The library from its source, as the tests' own type check reads it: no build needed, none stale.
      paths: { 'ipvs-netlink': [path.join(root, 'lib/index.ts')] },
    },
    files,
  };
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(config));
  const out = await run(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { env: plainEnv, maxBuffer: 64 * 1024 * 1024 }).then(
    () => '',
    (err: { stdout?: string }) => String(err.stdout ?? err),
  );
  // An error's file name says the README line its block starts on.
  t.same(out.split('\n').filter((l) => l.trim() !== ''), [], 'no compile errors');
});
