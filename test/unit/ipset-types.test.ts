// The ipset declarations as a strict user compiles them: the library's
// declaration files are emitted afresh, then test/types/ipset-consumer.ts
// is compiled against them with strict, exactOptionalPropertyTypes and no
// skipLibCheck. It passes a header read back to create()/replace() and
// reads every error class's parts, so a declaration that a strict program
// cannot use fails here.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
// The compiler loads no addon: under the sanitizer run (scripts/asan-test.sh)
// it goes without the preloaded runtime, whose leak report of node itself at
// exit would only bury its output.
const { LD_PRELOAD: _preload, ASAN_OPTIONS: _asan, LSAN_OPTIONS: _lsan, UBSAN_OPTIONS: _ubsan, ...plainEnv } = process.env;
const compilerRun = { env: plainEnv, maxBuffer: 64 * 1024 * 1024 };

t.test('a strict consumer compiles against the emitted declarations', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'strict-consumer-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const decl = path.join(dir, 'decl');
  await run(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.json'), '--declaration', '--emitDeclarationOnly', '--declarationMap', 'false', '--sourceMap', 'false', '--outDir', decl], compilerRun);
  const config = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: false,
      noEmit: true,
      lib: ['ES2022'],
      types: ['node'],
      typeRoots: [path.join(root, 'node_modules/@types')],
      baseUrl: dir,
      paths: { 'ipvs-netlink': [path.join(decl, 'lib/index.d.ts')] },
    },
    files: [path.join(root, 'test/types/ipset-consumer.ts')],
  };
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(config));
  const r = await run(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], compilerRun).then(
    () => ({ code: 0, out: '' }),
    (err: { code?: number; stdout?: string }) => ({ code: err.code ?? 1, out: String(err.stdout ?? err) }),
  );
  // Only ipset's declarations are this test's: other modules' are reported, not judged here.
  const ours = r.out.split('\n').filter((l) => /lib\/ipset\/|ipset-consumer/.test(l));
  t.same(ours, [], 'no errors in the ipset declarations or the consumer');
  if (r.code !== 0 && ours.length === 0) t.comment(`other declarations' errors:\n${r.out}`);
});
