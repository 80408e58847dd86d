/**
 * The healthz server (--healthz-bind-address, default 0.0.0.0:10256):
 * `/healthz` and `/livez` answered byte for byte as kube-proxy answers
 * them (pkg/proxy/healthcheck/proxy_health.go): the JSON of
 * {lastUpdated, currentTime, nodeEligible (healthz only), healthy, status
 * per IP family}, compact, no trailing newline, RFC 3339 times with
 * nanoseconds; 200 or 503; counted in kubeproxy_proxy_healthz_total /
 * _livez_total by code. A 0.0.0.0 address also accepts IPv6, as Go's
 * listener does.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { boundAddress, closeServer, listen, rfc3339Nano } from './http-util.js';
import { IP_FAMILY } from '../kubernetes/model.js';
import type { ProxyMetrics } from './metrics.js';
import type { HealthStatus, ProxyHealth } from './proxy-health.js';


export class HealthServer {
  private server?: Server;

  constructor(
    private readonly health: ProxyHealth,
    private readonly metrics?: ProxyMetrics,
  ) {}

  async start(bind: string): Promise<string> {
    this.server = await listen((req, res) => this.handle(req, res), bind, `--healthz-bind-address ${bind}`, { dualStackAny: true });
    return boundAddress(this.server);
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== '/healthz' && path !== '/livez') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }).end('404 page not found\n');
      return;
    }
    const s = this.health.status();
    const livez = path === '/livez';
    const eligible = livez ? undefined : this.health.eligible;
    const healthy = s.healthy && eligible !== false;
    const code = healthy ? 200 : 503;
    (livez ? this.metrics?.livezTotal : this.metrics?.healthzTotal)?.inc({ code: String(code) });
    res.writeHead(code, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' }).end(healthBody(s, healthy, eligible));
  }
}

/**
 * kube-proxy's ProxyHealth as Go's encoding/json writes it: fields in
 * struct order, nodeEligible and an empty status left out, map keys
 * sorted. While healthy, lastUpdated is now ("recent if the server is
 * healthy", kept for older clients).
 */
export function healthBody(s: HealthStatus, healthy: boolean, nodeEligible: boolean | undefined): string {
  const status: Record<string, { lastUpdated: string; healthy: boolean }> = {};
  for (const family of ['inet', 'inet6'] as const) {
    const f = s.families.get(family);
    if (f) status[IP_FAMILY[family]] = { lastUpdated: rfc3339Nano(f.lastUpdated), healthy: f.healthy };
  }
  return JSON.stringify({
    lastUpdated: rfc3339Nano(healthy ? s.currentTime : s.lastUpdated),
    currentTime: rfc3339Nano(s.currentTime),
    ...(nodeEligible === undefined ? {} : { nodeEligible }),
    healthy: s.healthy,
    ...(Object.keys(status).length ? { status } : {}),
  });
}
