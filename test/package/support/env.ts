/**
 * Where scripts/package-test.sh left the tarballs and the fresh projects,
 * and how to start each runtime. These tests run only under that script.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = fileURLToPath(new URL('../../..', import.meta.url));
const dir = process.env.PACKAGE_TEST_DIR;
if (!dir) throw new Error('test/package runs under scripts/package-test.sh (npm run test:package), which sets PACKAGE_TEST_DIR');
export const work = dir;
export const project = (name: string) => path.join(work, name);

/** The tarball whose name starts with `name-`. */
export function tarball(name: string): string {
  const file = readdirSync(path.join(work, 'tarballs')).find((f) => f.startsWith(`${name}-`) && f.endsWith('.tgz'));
  if (!file) throw new Error(`no ${name} tarball in ${work}/tarballs`);
  return path.join(work, 'tarballs', file);
}

/** The emulator and its options that run an arm64 program on this host (no binfmt needed). */
export const qemuArm64 = ['qemu-aarch64', '-L', '/usr/aarch64-linux-gnu'];

export interface Runtime {
  name: string;
  /** The command line that starts it, before the script's own arguments. */
  command: string[];
  bun: boolean;
}

export function runtime(name: 'node22' | 'node24' | 'node24-arm64' | 'bun'): Runtime {
  const bin = execFileSync('bash', [path.join(repo, 'scripts/runtimes.sh'), 'bin', name], { encoding: 'utf8' }).trim();
  const command = name.endsWith('-arm64') ? [...qemuArm64, bin] : [bin];
  return { name, command, bun: name === 'bun' };
}
