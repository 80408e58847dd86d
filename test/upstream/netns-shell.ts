/**
 * Shell commands in a network namespace for the yardstick: the tool's side
 * of a comparison, their checks, and the library as an `ipset` program on
 * PATH for their shell constructs.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Netns } from '../support/netns.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * A shell command in a namespace. With `started`, the command is the tool's
 * side of a comparison: bash says on stderr when it is about to exec it, and
 * `started` is called then (or at the end, whichever comes first), so the
 * library can act at the same moment rather than while `ip netns exec` and
 * bash start up (seconds on a loaded machine, enough for an element's
 * timeout to run out on one side only).
 */
export async function shell(ns: Netns, cwd: string, cmd: string, input?: string, started?: () => void, path?: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    const line = started ? `echo >&2; exec ${cmd}` : cmd;
    const env = path ? { ...process.env, PATH: `${path}:${process.env.PATH ?? ''}` } : process.env;
    const child = spawn('ip', ['netns', 'exec', ns.name, 'bash', '-c', line], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.once('data', () => started?.());
    child.stderr.resume();
    child.on('close', (code) => {
      started?.();
      resolve({ code: code ?? 1, stdout });
    });
    child.stdin.on('error', () => undefined); // a command that reads no input closes it early
    child.stdin.end(input ?? '');
  });
}

/**
 * A folder whose `ipset` is ipset-lib-cli.ts: the library as a program, for
 * their lines that call ipset inside a shell construct.
 */
export function libraryOnPath(dir: string): string {
  const bin = path.join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const loader = path.join(here, '../../node_modules/@tapjs/typescript/dist/esm/import.mjs');
  // Transpiled without type checks: a loop starts it dozens of times, and a type check per start takes seconds.
  const start = `TS_NODE_TRANSPILE_ONLY=1 exec '${process.execPath}' --import='${loader}' '${path.join(here, 'ipset-lib-cli.ts')}' "$@"`;
  writeFileSync(path.join(bin, 'ipset'), `#!/bin/sh\n${start}\n`, { mode: 0o755 });
  return bin;
}

