/**
 * Ends the proxy when its --config file changes, as kube-proxy does, so
 * that its pod restarts with the new file.
 *
 * kube-proxy watches the file itself, and so misses the usual change: a
 * ConfigMap volume is updated by swapping its `..data` symlink, which the
 * watched inode sees only as a chmod and a removal, both ignored upstream.
 * Here the file's directory is watched instead, and any event naming the
 * file or `..data` re-reads it: changed content (or a file gone) counts.
 */
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

export const CONFIG_CHANGED = "content of the proxy server's configuration file was updated";

function contentOf(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Calls onChange(reason) once when the file's content changes; returns the watcher (close it to stop). */
export function watchConfigFile(path: string, onChange: (reason: string) => void): FSWatcher {
  const original = contentOf(path);
  const name = basename(path);
  let fired = false;
  const watcher = watch(dirname(path), (_event, file) => {
    if (fired || (file !== null && file !== name && file !== '..data')) return;
    if (contentOf(path) === original) return;
    fired = true;
    watcher.close();
    onChange(CONFIG_CHANGED);
  });
  watcher.on('error', (err) => {
    if (fired) return;
    fired = true;
    onChange(`watching the configuration file failed: ${err.message}`);
  });
  watcher.unref();
  return watcher;
}
