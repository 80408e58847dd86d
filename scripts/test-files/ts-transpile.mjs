#!/usr/bin/env node
/**
 * node scripts/test-files/ts-transpile.mjs: transpiles every TypeScript file of
 * the project (not node_modules) on the host, with tsconfig.json's options,
 * into .sandbox/ts/, for ts-transpiled.mjs to serve in a sandbox guest.
 *
 * Why: ts-node, which tap loads into every test process, loads the
 * TypeScript compiler and transpiles the library afresh in each test file's
 * process. Under QEMU's emulation (JavaScript many times slower) that is
 * minutes a file; under user-mode-linux, where each page first touched
 * costs tens of times what it does on metal, many seconds a file. On the host it takes seconds, once. Only files whose text changed are done
 * again; entries no file has any more are removed.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cache = path.join(root, '.sandbox', 'ts');
mkdirSync(cache, { recursive: true });

const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); } });
// The package is "type": "module": a .ts file is ESM (transpileModule, seeing one file, cannot know).
const options = { ...config.options, sourceMap: false, inlineSourceMap: true, inlineSources: true, declaration: false, noEmit: false };
const optionsFor = (file) => ({ ...options, module: file.endsWith('.cts') ? ts.ModuleKind.CommonJS : ts.ModuleKind.ESNext });

/** The cache entry's name: the file's path and text, so an edit or a move makes a new one. */
const entryName = (file, text) => createHash('sha256').update(file).update('\0').update(text).digest('hex') + '.js';

function* tsFiles(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.') || e.name === 'dist' || e.name === 'build') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* tsFiles(p);
    else if (/\.[cm]?ts$/.test(e.name) && !/\.d\.[cm]?ts$/.test(e.name)) yield p; // declarations have nothing to run
  }
}

const keep = new Set();
let made = 0;
for (const file of tsFiles(root)) {
  const text = readFileSync(file, 'utf8');
  const name = entryName(file, text);
  keep.add(name);
  if (existsSync(path.join(cache, name))) continue;
  const out = ts.transpileModule(text, { compilerOptions: optionsFor(file), fileName: file, reportDiagnostics: false });
  writeFileSync(path.join(cache, name), out.outputText);
  made++;
}
for (const name of readdirSync(cache)) if (!keep.has(name)) rmSync(path.join(cache, name));
process.stderr.write(`sandbox: TypeScript transpiled on the host: ${keep.size} files (${made} new)\n`);
