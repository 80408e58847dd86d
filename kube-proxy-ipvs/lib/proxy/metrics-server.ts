/**
 * The metrics server (--metrics-bind-address, default 127.0.0.1:10249):
 * /metrics, plus /healthz, /proxyMode and /configz as kube-proxy serves
 * them there (cmd/kube-proxy serveMetrics): plain-text answers with
 * charset and nosniff, /configz the effective configuration under its
 * group name, as component-base's configz writes it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { GROUP as CONFIGZ_NAME } from './config-schema.js';
import { boundAddress, closeServer, listen } from './http-util.js';
import type { ProxyMetrics } from './metrics.js';

const TEXT = { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };

export interface MetricsServerOptions {
  /** The effective KubeProxyConfiguration (v1alpha1, with kind and apiVersion); without it /configz is 404. */
  configz?: () => unknown;
}

export class MetricsServer {
  private server?: Server;

  constructor(
    private readonly metrics: ProxyMetrics,
    private readonly opts: MetricsServerOptions = {},
  ) {}

  async start(bind: string): Promise<string> {
    this.server = await listen((req, res) => this.handle(req, res), bind, `--metrics-bind-address ${bind}`);
    return boundAddress(this.server);
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    if (path === '/metrics') {
      this.metrics.registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': this.metrics.registry.contentType }).end(text),
        (err: Error) => res.writeHead(500, TEXT).end(`${err.message}\n`),
      );
    } else if (path === '/healthz' || path === '/healthz/ping') {
      // apiserver's healthz handler with its one check, "ping".
      res.writeHead(200, TEXT).end(url.searchParams.has('verbose') && path === '/healthz' ? '[+]ping ok\nhealthz check passed\n' : 'ok');
    } else if (path === '/proxyMode') {
      res.writeHead(200, TEXT).end('ipvs');
    } else if (path === '/configz' && this.opts.configz) {
      let body: string;
      try {
        body = JSON.stringify({ [CONFIGZ_NAME]: this.opts.configz() });
      } catch (err) {
        res.writeHead(500, TEXT).end(`${(err as Error).message}\n`);
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' }).end(body);
    } else {
      res.writeHead(404, TEXT).end('404 page not found\n');
    }
  }
}
