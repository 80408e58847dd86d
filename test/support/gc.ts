/**
 * A full collection for tests that measure what is kept: Bun's own on Bun
 * (JavaScriptCore has no --expose-gc), else V8's gc(), taken from a new
 * context after turning the flag on, so the test runner needs no node flag.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;

export const gc: () => void = bun
  ? () => bun.gc(true)
  : (setFlagsFromString('--expose-gc'), runInNewContext('gc') as () => void);
