/**
 * Ends the proxy when its --config file changes, as kube-proxy does, so
 * that its pod restarts with the new file.
 *
 * kube-proxy watches the file itself, and so misses the usual change: a
 * ConfigMap volume is updated by swapping its `..data` symlink, which the
 * watched inode sees only as a chmod and a removal, both ignored upstream.
 * Here the file's directory is watched instead, and any event naming the
 * file or `..data` re-reads it: changed content (or a file gone) counts.
 * The content is also read every few seconds, for filesystems whose changes
 * inotify does not report (network and FUSE mounts, user-mode-linux's
 * hostfs).
 */
import { readFileSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

export const CONFIG_CHANGED = "content of the proxy server's configuration file was updated";

function contentOf(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** How often the content is read besides the events. */
const POLL_MS = 5000;

/** Calls onChange(reason) once when the file's content changes; close() stops watching. */
export function watchConfigFile(path: string, onChange: (reason: string) => void): { close(): void } {
  const original = contentOf(path);
  const name = basename(path);
  let fired = false;
  const fire = (reason: string) => {
    if (fired) return;
    fired = true;
    close();
    onChange(reason);
  };
  const check = () => {
    if (!fired && contentOf(path) !== original) fire(CONFIG_CHANGED);
  };
  const watcher = watch(dirname(path), (_event, file) => {
    if (file === null || file === name || file === '..data') check();
  });
  watcher.on('error', (err) => fire(`watching the configuration file failed: ${err.message}`));
  watcher.unref();
  const poll = setInterval(check, POLL_MS);
  poll.unref();
  function close(): void {
    clearInterval(poll);
    watcher.close();
  }
  return { close };
}
