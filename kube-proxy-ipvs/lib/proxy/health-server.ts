/**
 * The healthz server (--healthz-bind-address, default 0.0.0.0:10256):
 * `/healthz` and `/livez` answered as kube-proxy answers them, JSON with
 * the last sync time, 200 or 503, and counted in
 * kubeproxy_proxy_healthz_total / _livez_total by code.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { boundAddress, closeServer, goTime, listen } from './http-util.js';
import type { ProxyMetrics } from './metrics.js';
import type { ProxyHealth } from './proxy-health.js';

export class HealthServer {
  private server?: Server;

  constructor(
    private readonly health: ProxyHealth,
    private readonly metrics?: ProxyMetrics,
  ) {}

  async start(bind: string): Promise<string> {
    this.server = await listen((req, res) => this.handle(req, res), bind, `--healthz-bind-address ${bind}`);
    return boundAddress(this.server);
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== '/healthz' && path !== '/livez') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
      return;
    }
    const s = this.health.status();
    const livez = path === '/livez';
    const healthy = livez ? s.healthy : s.healthy && this.health.eligible;
    const code = healthy ? 200 : 503;
    (livez ? this.metrics?.livezTotal : this.metrics?.healthzTotal)?.inc({ code: String(code) });
    const body = livez
      ? `{"lastUpdated": ${JSON.stringify(goTime(s.lastUpdated))},"currentTime": ${JSON.stringify(goTime(s.currentTime))}}`
      : `{"lastUpdated": ${JSON.stringify(goTime(s.lastUpdated))},"currentTime": ${JSON.stringify(goTime(s.currentTime))}, "nodeEligible": ${this.health.eligible}}`;
    res.writeHead(code, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' }).end(body);
  }
}
