/**
 * A listening TCP socket inside another network namespace (--netns), for
 * the health-check node ports: they must be reachable on the node's
 * addresses, which exist only in the namespace the proxy programs.
 *
 * Node.js cannot create a socket in another namespace from its own
 * threads, so a short-lived helper does it: `nsenter --net=PATH node -e`
 * binds and listens there, then hands the listening socket to this process
 * over the IPC channel (SCM_RIGHTS, as the cluster module does) and exits.
 * A socket belongs to the namespace it was created in for its whole life,
 * so the server built on it here accepts connections arriving there. One
 * helper per socket, only when a health-check port is added.
 */
import { spawn } from 'node:child_process';
import type { Server as NetServer } from 'node:net';

const HELPER = `
const net = require('net');
const [host, port] = process.argv.slice(1);
const s = net.createServer();
s.on('error', (e) => { process.send({ error: e.code || e.message }, () => process.exit(1)); });
s.listen({ host, port: Number(port), exclusive: true }, () => process.send({ ok: true }, s, () => { s.close(); process.disconnect(); }));
`;

/** Resolves with a listening socket bound to host:port in the namespace at `netns`; rejects with the bind error's code. */
export function listeningSocketIn(netns: string, host: string, port: number, timeoutMs = 15_000): Promise<NetServer> {
  return new Promise((resolve, reject) => {
    const child = spawn('nsenter', [`--net=${netns}`, '--', process.execPath, '-e', HELPER, host, String(port)], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      // The helper is plain CommonJS: no loaders or flags of ours.
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no listening socket from ${netns} within ${timeoutMs} ms`));
    }, timeoutMs);
    let settled = false;
    const done = (err: Error | undefined, server?: NetServer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(server!);
    };
    child.on('message', (msg: { ok?: boolean; error?: string }, handle: unknown) => {
      if (msg.ok && handle) done(undefined, handle as NetServer);
      else done(Object.assign(new Error(msg.error ?? 'the helper sent no socket'), { code: msg.error }));
    });
    child.on('error', (err) => done(err));
    child.on('exit', (code) => done(new Error(`the listening helper in ${netns} exited ${code}: ${stderr.trim() || 'no socket sent'}`)));
  });
}
