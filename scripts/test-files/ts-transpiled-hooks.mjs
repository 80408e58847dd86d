/**
 * Module hooks for ts-transpiled.mjs. resolve: ts-node's own import is
 * answered with an empty module; a relative `.js` import that names no file
 * takes the `.ts` beside it (TypeScript's NodeNext convention, as ts-node
 * does). load: a `.ts` file's JavaScript comes from the host-made cache,
 * found by the file's path and text; a file missing there (written after
 * the cache was made) is transpiled here, slowly, with the same compiler.
 *
 * Two forms of the same hooks: `syncHooks` for module.registerHooks(), which
 * runs them on the loading thread, and the exported resolve/load for
 * module.register(), which runs them on a thread of their own (node before
 * 22.15). The thread costs every process about a second in user-mode-linux,
 * where thread switches and first-touched pages are slow.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cache = path.join(root, '.sandbox', 'ts');
const TS_NODE = /^@isaacs\/ts-node-temp-fork-for-pr-2009(\/|$)|^ts-node(\/|$)/;
const EMPTY = { url: 'data:text/javascript,export{}', shortCircuit: true };
const require = createRequire(import.meta.url);

/** The `.ts` beside a relative `.js` import that was not found, or undefined to let the error stand. */
const tsInstead = (specifier, err) =>
  err?.code === 'ERR_MODULE_NOT_FOUND' && /^\.\.?\//.test(specifier) && specifier.endsWith('.js') ? specifier.replace(/\.js$/, '.ts') : undefined;

let compiler;
function transpileHere(file, text) {
  compiler ??= require('typescript');
  return compiler.transpileModule(text, {
    compilerOptions: { module: file.endsWith('.cts') ? compiler.ModuleKind.CommonJS : compiler.ModuleKind.ESNext, target: compiler.ScriptTarget.ES2022, esModuleInterop: true, inlineSourceMap: true },
    fileName: file,
  }).outputText;
}

const isTs = (url) => url.startsWith('file:') && /\.[cm]?ts$/.test(url);
function loadTs(url) {
  const file = fileURLToPath(url);
  const text = readFileSync(file, 'utf8');
  const entry = path.join(cache, createHash('sha256').update(file).update('\0').update(text).digest('hex') + '.js');
  const source = existsSync(entry) ? readFileSync(entry, 'utf8') : transpileHere(file, text);
  return { format: file.endsWith('.cts') ? 'commonjs' : 'module', source, shortCircuit: true };
}

export const syncHooks = {
  resolve(specifier, context, next) {
    if (TS_NODE.test(specifier)) return EMPTY;
    try {
      return next(specifier, context);
    } catch (err) {
      const ts = tsInstead(specifier, err);
      if (ts === undefined) throw err;
      return next(ts, context);
    }
  },
  load: (url, context, next) => (isTs(url) ? loadTs(url) : next(url, context)),
};

export async function resolve(specifier, context, next) {
  if (TS_NODE.test(specifier)) return EMPTY;
  try {
    return await next(specifier, context);
  } catch (err) {
    const ts = tsInstead(specifier, err);
    if (ts === undefined) throw err;
    return next(ts, context);
  }
}

export async function load(url, context, next) {
  return isTs(url) ? loadTs(url) : next(url, context);
}
