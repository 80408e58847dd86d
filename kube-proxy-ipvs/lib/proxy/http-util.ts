/**
 * Listening helpers shared by the healthz, metrics and service health-check
 * servers: bind errors become messages that name the flag to change.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { listeningSocketIn } from './netns-listen.js';
import { parseHostPort } from './options.js';

export async function listen(handler: RequestListener, bind: string, what: string): Promise<Server> {
  const { host, port } = parseHostPort(bind);
  return listenOn(handler, host, port, what);
}

/**
 * Listens on host:port, in this process's network namespace or, given
 * `netns`, in that one (a socket made there by a helper, netns-listen.ts).
 */
export async function listenOn(handler: RequestListener, host: string, port: number, what: string, netns?: string): Promise<Server> {
  const server = createServer(handler);
  // Scrapes and probes are short; do not let idle keep-alive sockets delay shutdown.
  server.keepAliveTimeout = 5000;
  const failed = (err: NodeJS.ErrnoException) => {
    const why =
      err.code === 'EADDRINUSE'
        ? `${host}:${port} is already in use (another kube-proxy?)`
        : err.code === 'EADDRNOTAVAIL'
          ? `${host} is not an address of this host${netns ? ` (in ${netns})` : ''}`
          : err.code === 'EACCES'
            ? `binding ${host}:${port} is not permitted`
            : err.message;
    return new Error(`${what}: cannot listen: ${why}`);
  };
  let handle: NetServer | undefined;
  if (netns !== undefined) {
    try {
      handle = await listeningSocketIn(netns, host, port);
    } catch (err) {
      throw failed(err as NodeJS.ErrnoException);
    }
  }
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(failed(err)));
    if (handle) server.listen(handle, () => resolve(server));
    else server.listen(port, host, () => resolve(server));
  });
}

export function boundAddress(server: Server): string {
  const a = server.address() as AddressInfo;
  return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}

export async function closeServer(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Go's time.Time.String() without the monotonic part: "2026-11-22 05:10:00.123 +0000 UTC", as kube-proxy prints times. */
export function goTime(ms: number): string {
  if (ms === 0) return '0001-01-01 00:00:00 +0000 UTC';
  const iso = new Date(ms).toISOString(); // 2026-11-22T05:10:00.123Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 23).replace(/\.?0+$/, '')} +0000 UTC`;
}
