/**
 * What a running proxy keeps, measured from outside: a full collection in
 * the proxy, then its heap by kind and its resident set.
 *
 * Why not the resident set sampled as the proxy runs: it moves in steps of
 * several MiB at moments V8 picks (a major collection that unmaps emptied
 * pages, the idle-time memory reducer, old space growing to its next
 * limit, a relist's burst of garbage), so over a minute or two its trend
 * says more about V8's schedule than about what the proxy holds, in either
 * direction. A collection on demand takes the schedule out: what survives
 * it is what the proxy keeps.
 *
 * The proxy is started with INSPECT_FLAG (a node flag; the proxy itself
 * runs as it always does) and asked over the DevTools protocol:
 * HeapProfiler.collectGarbage (the full collection DevTools' "Collect
 * garbage" makes), then V8's heap statistics by space and the bytes held
 * by ArrayBuffers. No protocol domain is enabled, so nothing is recorded
 * in the proxy between two probes.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** The node flag that lets heapProbe() reach the process: the inspector on a free loopback port. */
export const INSPECT_FLAG = '--inspect=127.0.0.1:0';

export interface HeapReading {
  /** Milliseconds since the epoch, after the collection. */
  at: number;
  /**
   * Bytes of the program's data after the collection: the heap's ordinary
   * objects (V8's new, old and large-object spaces) and the memory of its
   * ArrayBuffers and Buffers, which lies outside V8's heap.
   */
  objectBytes: number;
  /**
   * Bytes of code after it (V8's code and trusted spaces: bytecode and
   * compiled functions), which keeps growing for minutes as more of the
   * program is compiled and optimised, leak or not.
   */
  codeBytes: number;
  /** The resident set after the collection, bytes. */
  rssBytes: number;
  /** How long the collection took, ms (the proxy is paused for it). */
  collectMs: number;
}

const OBJECT_SPACES = new Set(['new_space', 'old_space', 'large_object_space', 'new_large_object_space']);
const CODE_SPACES = new Set(['code_space', 'code_large_object_space', 'trusted_space', 'trusted_large_object_space']);

/** The inspector's WebSocket address, from node's "Debugger listening on ws://..." line in the process's stderr. */
export async function inspectorUrl(stderr: () => string, timeoutMs = 10_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const m = /Debugger listening on (ws:\/\/\S+)/.exec(stderr());
    if (m !== null) return m[1];
    if (Date.now() > end) throw new Error(`no "Debugger listening on" line in the process's stderr after ${timeoutMs} ms: was it started with ${INSPECT_FLAG}?`);
    await sleep(50);
  }
}

/** Collects the garbage of the process whose inspector is at `url`, then reads its heap and resident set. */
export async function heapProbe(url: string): Promise<HeapReading> {
  const session = await Session.open(url);
  try {
    const t0 = performance.now();
    await session.call('HeapProfiler.collectGarbage');
    const collectMs = performance.now() - t0;
    const { result, exceptionDetails } = (await session.call('Runtime.evaluate', {
      expression:
        "({ spaces: process.getBuiltinModule('node:v8').getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]), memory: process.memoryUsage() })",
      returnByValue: true,
    })) as { result: { value: { spaces: Array<[string, number]>; memory: { rss: number; arrayBuffers: number } } }; exceptionDetails?: { text: string } };
    if (exceptionDetails) throw new Error(`inspector: reading the heap's spaces failed: ${exceptionDetails.text}`);
    let objectBytes = result.value.memory.arrayBuffers;
    let codeBytes = 0;
    for (const [space, used] of result.value.spaces) {
      if (OBJECT_SPACES.has(space)) objectBytes += used;
      else if (CODE_SPACES.has(space)) codeBytes += used;
    }
    return { at: Date.now(), objectBytes, codeBytes, rssBytes: result.value.memory.rss, collectMs };
  } finally {
    session.close();
  }
}

/** One DevTools-protocol connection: numbered calls, each answered by the reply with its id. */
class Session {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();

  private constructor(private readonly ws: WebSocket) {
    ws.onmessage = (e) => {
      const m = JSON.parse(String(e.data)) as { id?: number; result?: unknown; error?: { message: string } };
      const p = m.id === undefined ? undefined : this.pending.get(m.id);
      if (p === undefined) return;
      this.pending.delete(m.id!);
      if (m.error) p.reject(new Error(`inspector: ${m.error.message}`));
      else p.resolve(m.result);
    };
    ws.onclose = () => {
      for (const p of this.pending.values()) p.reject(new Error('inspector: the connection closed before the answer'));
      this.pending.clear();
    };
  }

  static async open(url: string): Promise<Session> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error(`inspector: cannot connect to ${url}`));
    });
    return new Session(ws);
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.ws.close();
  }
}
