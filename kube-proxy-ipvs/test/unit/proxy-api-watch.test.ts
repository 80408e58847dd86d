/**
 * The watch request (sources/api-watch.ts) against a server that answers
 * as the API server can: events one per line but split anywhere between
 * chunks, a line that is not JSON, a refusal with a Status body, a stream
 * the server ends. Each watch says `done` once.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { watchObjects } from '../../lib/proxy/sources/api-watch.js';
import { loadKubeConfig } from '../../lib/proxy/sources/kubeconfig.js';

async function serve(t: { teardown(fn: () => unknown): void }, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

interface Watched {
  events: [string, unknown][];
  ends: unknown[];
  ended: Promise<unknown>;
  controller: AbortController;
}

async function watch(url: string, query: Record<string, string | number | boolean>): Promise<Watched> {
  const events: [string, unknown][] = [];
  const ends: unknown[] = [];
  let resolveEnd!: (err: unknown) => void;
  const ended = new Promise<unknown>((r) => (resolveEnd = r));
  const controller = await watchObjects(loadKubeConfig({ master: url }), '/api/v1/services', query, (type, object) => events.push([type, object]), (err) => {
    ends.push(err);
    resolveEnd(err);
  });
  return { events, ends, ended, controller };
}

t.test('events split across chunks, a line that is not JSON, the server ending the stream', async (t) => {
  let asked: URLSearchParams | undefined;
  const url = await serve(t, (req, res) => {
    asked = new URL(req.url ?? '/', 'http://x').searchParams;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    const stream = `${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '5' } } })}\nnot json\n${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '6' } } })}\n${JSON.stringify({ type: 'DELETED', object: { metadata: { name: 'a' } } })}`;
    // Cut twice inside the first event (three chunks make it), right after it, and inside the last, which the end of the stream completes.
    const cuts = [10, 30, stream.indexOf('\n') + 1, stream.length - 5];
    // A pause after each piece, so that they arrive as separate chunks.
    let at = 0;
    const next = (i: number) => {
      if (i === cuts.length) return res.end(stream.slice(at));
      res.write(stream.slice(at, cuts[i]));
      at = cuts[i];
      setTimeout(() => next(i + 1), 20);
    };
    next(0);
  });
  const w = await watch(url, { resourceVersion: '4', allowWatchBookmarks: true, timeoutSeconds: 300 });
  t.equal(await w.ended, null, 'done with null: the server ended the stream');
  t.same(w.events.map(([type]) => type), ['ADDED', 'BOOKMARK', 'DELETED'], 'each event once, in order; the line that is not JSON skipped');
  t.same(w.events[0][1], { metadata: { name: 'a', resourceVersion: '5' } });
  t.same(Object.fromEntries(asked ?? []), { watch: 'true', resourceVersion: '4', allowWatchBookmarks: 'true', timeoutSeconds: '300' }, 'the query, with watch=true');
  await new Promise((r) => setTimeout(r, 50));
  t.equal(w.ends.length, 1, 'done once');
});

t.test('a refusal ends the watch with its status and the Status message', async (t) => {
  const url = await serve(t, (_req, res) => {
    res.writeHead(410, { 'Content-Type': 'application/json' }).end(JSON.stringify({ kind: 'Status', message: 'too old resource version: 4 (9)', code: 410 }));
  });
  const err = (await (await watch(url, {})).ended) as { statusCode?: number; message?: string };
  t.equal(err.statusCode, 410);
  t.equal(err.message, 'too old resource version: 4 (9)');
  const plain = await serve(t, (_req, res) => res.writeHead(503).end('down'));
  const err2 = (await (await watch(plain, {})).ended) as { statusCode?: number; message?: string };
  t.same([err2.statusCode, err2.message], [503, 'Service Unavailable'], 'no Status body: the status line');
});

t.test('no server: done with the connection error; aborting a watch ends it once', async (t) => {
  const gone = await serve(t, () => {});
  const closed = gone.replace(/:\d+$/, ':1');
  const err = (await (await watch(closed, {})).ended) as NodeJS.ErrnoException;
  t.equal(err.code, 'ECONNREFUSED');
  const url = await serve(t, (_req, res) => res.writeHead(200).write('')); // a watch that stays open
  const w = await watch(url, {});
  await new Promise((r) => setTimeout(r, 50));
  t.same(w.ends, [], 'still open');
  w.controller.abort();
  await w.ended;
  await new Promise((r) => setTimeout(r, 50));
  t.equal(w.ends.length, 1, 'done once after the abort');
});
