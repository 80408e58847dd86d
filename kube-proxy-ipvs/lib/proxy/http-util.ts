/**
 * Listening helpers shared by the healthz, metrics and service health-check
 * servers: bind errors become messages that name the flag to change.
 */
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { listeningSocketIn } from './netns-listen.js';
import { createServer } from './node-http.js';
import { parseHostPort } from './options.js';

/**
 * `dualStackAny`: 0.0.0.0 means every address of both families, as Go's
 * "tcp" listener takes it (Node's is IPv4 only); a host without IPv6
 * falls back to IPv4.
 */
export async function listen(handler: RequestListener, bind: string, what: string, opts: { dualStackAny?: boolean } = {}): Promise<Server> {
  const { host, port } = parseHostPort(bind);
  if (opts.dualStackAny && host === '0.0.0.0') {
    try {
      return await listenOn(handler, '::', port, what);
    } catch (err) {
      if (!/EAFNOSUPPORT|EADDRNOTAVAIL|not an address/.test(String((err as Error).cause ?? err))) throw err;
    }
  }
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
    return new Error(`${what}: cannot listen: ${why}`, { cause: err.code });
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

/**
 * Go's time.Time in JSON (RFC 3339 with nanoseconds, trailing zeros of
 * the fraction dropped, UTC as "Z"), as kube-proxy's health bodies carry
 * times; 0 is Go's zero time.
 */
export function rfc3339Nano(ms: number): string {
  if (ms === 0) return '0001-01-01T00:00:00Z';
  const whole = Math.floor(ms);
  const iso = new Date(whole).toISOString(); // 2026-11-22T05:10:00.123Z
  // Sub-millisecond clock readings keep their digits down to the nanosecond.
  const nanos = String(Math.min(999_999, Math.round((ms - whole) * 1e6))).padStart(6, '0');
  const fraction = `${iso.slice(20, 23)}${nanos}`.replace(/0+$/, '');
  return `${iso.slice(0, 19)}${fraction ? `.${fraction}` : ''}Z`;
}
