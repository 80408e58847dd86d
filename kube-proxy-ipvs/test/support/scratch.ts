/**
 * Scratch folders for tests: all under one folder per test process, which
 * is removed when the process exits, so a test leaves nothing in the
 * system's temporary folder whatever it forgets to clean up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let root: string | undefined;

/** A new empty folder whose name starts with `prefix`. */
export function scratchDir(prefix: string): string {
  if (root === undefined) {
    const made = mkdtempSync(join(tmpdir(), 'kp-tests-'));
    process.on('exit', () => {
      // A throw here would fail the test file after its tests passed.
      try {
        rmSync(made, { recursive: true, force: true });
      } catch {
        // left for the system's cleaning of its temporary folder
      }
    });
    root = made;
  }
  return mkdtempSync(join(root, prefix));
}
