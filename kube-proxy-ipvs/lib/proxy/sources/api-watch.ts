/**
 * A watch of a collection on the API server (a GET with watch=true, through
 * apiRequest: the kubeconfig's credentials, TLS settings and agent), read
 * as the API streams it: one JSON event per line. It behaves as
 * client-node's Watch, which it replaces: an answer other than 200 ends it
 * with an error carrying the status, a line that is not JSON is skipped, the
 * connection is kept alive with TCP keepalives, and `done` is called once,
 * with the error or with null when the server closes the stream. Watch
 * makes its request with node-fetch, whose URL parser keeps large Unicode
 * tables on the heap; node:http(s) needs none of it.
 */
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { apiRequest, statusError } from './api-list.js';
import type { WatchEventHandler, Watcher } from './informer.js';

/** Keepalive probes on an idle watch connection, as client-node's Watch sets them. */
const KEEPALIVE_MS = 30_000;

export function apiWatcher(kc: KubeConfig): Watcher {
  return { watch: (path, query, event, done) => watchObjects(kc, path, query, event, done) };
}

export async function watchObjects(
  kc: KubeConfig,
  path: string,
  query: Record<string, string | number | boolean>,
  event: WatchEventHandler,
  done: (err: unknown) => void,
): Promise<AbortController> {
  const controller = new AbortController();
  let ended = false;
  const end = (err: unknown) => {
    if (ended) return;
    ended = true;
    controller.abort();
    done(err);
  };
  const params: Record<string, string> = { watch: 'true' };
  for (const [k, v] of Object.entries(query)) params[k] = String(v);
  try {
    await apiRequest(kc, path, params, controller.signal, (res) => {
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (c: string) => (text += c));
        res.on('end', () => end(statusError(res.statusCode ?? 0, text)));
        res.on('error', end);
        return;
      }
      res.socket.setKeepAlive(true, KEEPALIVE_MS);
      // The text after the last newline, until the rest of its line comes (an object may span many chunks).
      let partial = '';
      res.on('data', (chunk: string) => {
        let from = 0;
        for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', from)) {
          lineOf(partial + chunk.slice(from, nl), event);
          partial = '';
          from = nl + 1;
        }
        partial += chunk.slice(from);
      });
      res.on('end', () => {
        lineOf(partial, event);
        end(null);
      });
      res.on('close', () => end(null));
      res.on('error', end);
    }, end);
  } catch (err) {
    end(err);
  }
  return controller;
}

function lineOf(line: string, event: WatchEventHandler): void {
  if (line.trim() === '') return;
  let parsed: { type?: unknown; object?: unknown };
  try {
    parsed = JSON.parse(line) as { type?: unknown; object?: unknown };
  } catch {
    return; // as client-node's Watch: a line that is not an event is skipped
  }
  if (typeof parsed.type === 'string') event(parsed.type, parsed.object);
}
