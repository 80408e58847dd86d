/**
 * A TCP connection kept open by a client process in a network namespace,
 * and the teardown that kills such children: for tests that need a live
 * connection through the kernel (conntrack entries, IPVS connections that
 * outlive their real server). The client sends a line per ask() and waits
 * for the one-line answer.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Netns } from './netns.js';

export interface TapLike {
  teardown(fn: () => unknown): void;
}

/** Kills `child` at the test's teardown, if it is still running, and waits for it. */
export function killAtTeardown(t: TapLike, child: ChildProcess): void {
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = once(child, 'exit');
      child.kill('SIGKILL');
      await gone;
    }
  });
}

const CLIENT = `
const [host, port] = process.argv.slice(1);
const s = require('net').connect(Number(port), host, () => console.log('connected'));
s.setEncoding('utf8');
s.on('data', (d) => process.stdout.write(d));
s.on('error', (e) => { console.log('error ' + e.code); process.exit(1); });
s.on('close', () => { console.log('closed'); process.exit(0); });
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { for (const l of d.split('\\n')) if (l === 'close') s.end(); else if (l === 'reset') s.resetAndDestroy(); else if (l) s.write(l + '\\n'); });
`;

export interface Connection {
  /** Sends a line on the open connection; resolves with the answer (the server's name). */
  ask(): Promise<string>;
  close(): Promise<void>;
  /** Aborts the connection with a RST: IPVS moves it to CLOSE, which expires in 10 s (a FIN leaves TIME_WAIT for 2 minutes). */
  reset(): Promise<void>;
}

/** A TCP connection kept open by a client process in `ns`. */
export async function openConnection(t: TapLike, ns: Netns, host: string, port: number): Promise<Connection> {
  const child = spawn('ip', ['netns', 'exec', ns.name, process.execPath, '-e', CLIENT, host, String(port)], { stdio: ['pipe', 'pipe', 'inherit'] });
  killAtTeardown(t, child);
  const lines = createInterface({ input: child.stdout! });
  const queue: string[] = [];
  const waiters: Array<(l: string) => void> = [];
  lines.on('line', (l) => (waiters.length ? waiters.shift()!(l) : queue.push(l)));
  const next = () =>
    Promise.race([
      new Promise<string>((resolve) => (queue.length ? resolve(queue.shift()!) : waiters.push(resolve))),
      sleep(15000).then(() => 'no answer within 15 s'),
    ]);
  const hello = await next();
  if (hello !== 'connected') throw new Error(`client could not connect: ${hello}`);
  return {
    async ask() {
      child.stdin!.write('ping\n');
      return next();
    },
    async close() {
      child.stdin!.write('close\n');
      await next();
    },
    async reset() {
      child.stdin!.write('reset\n');
      await next();
    },
  };
}
