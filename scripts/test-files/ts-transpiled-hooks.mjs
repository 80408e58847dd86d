/**
 * Module hooks for ts-transpiled.mjs. resolve: ts-node's own import is
 * answered with an empty module; a relative `.js` import that names no file
 * takes the `.ts` beside it (TypeScript's NodeNext convention, as ts-node
 * does). load: a `.ts` file's JavaScript comes from the host-made cache,
 * found by the file's path and text; a file missing there (written after
 * the cache was made) is transpiled here, slowly, with the same compiler.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cache = path.join(root, '.sandbox', 'ts');
const TS_NODE = /^@isaacs\/ts-node-temp-fork-for-pr-2009(\/|$)|^ts-node(\/|$)/;

export async function resolve(specifier, context, next) {
  if (TS_NODE.test(specifier)) return { url: 'data:text/javascript,export{}', shortCircuit: true };
  try {
    return await next(specifier, context);
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !/^\.\.?\//.test(specifier) || !specifier.endsWith('.js')) throw err;
    return next(specifier.replace(/\.js$/, '.ts'), context);
  }
}

let compiler;
async function transpileHere(file, text) {
  compiler ??= (await import('typescript')).default;
  return compiler.transpileModule(text, {
    compilerOptions: { module: file.endsWith('.cts') ? compiler.ModuleKind.CommonJS : compiler.ModuleKind.ESNext, target: compiler.ScriptTarget.ES2022, esModuleInterop: true, inlineSourceMap: true },
    fileName: file,
  }).outputText;
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !/\.[cm]?ts$/.test(url)) return next(url, context);
  const file = fileURLToPath(url);
  const text = readFileSync(file, 'utf8');
  const entry = path.join(cache, createHash('sha256').update(file).update('\0').update(text).digest('hex') + '.js');
  const source = existsSync(entry) ? readFileSync(entry, 'utf8') : await transpileHere(file, text);
  return { format: file.endsWith('.cts') ? 'commonjs' : 'module', source, shortCircuit: true };
}
