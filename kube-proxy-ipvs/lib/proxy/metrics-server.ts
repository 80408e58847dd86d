/**
 * The metrics server (--metrics-bind-address, default 127.0.0.1:10249):
 * /metrics, plus /healthz and /proxyMode as kube-proxy serves them there.
 */
import type { Server } from 'node:http';
import { boundAddress, closeServer, listen } from './http-util.js';
import type { ProxyMetrics } from './metrics.js';

export class MetricsServer {
  private server?: Server;

  constructor(private readonly metrics: ProxyMetrics) {}

  async start(bind: string): Promise<string> {
    this.server = await listen(
      (req, res) => {
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        if (path === '/metrics') {
          this.metrics.registry.metrics().then(
            (text) => res.writeHead(200, { 'Content-Type': this.metrics.registry.contentType }).end(text),
            (err: Error) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${err.message}\n`),
          );
        } else if (path === '/healthz') {
          res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
        } else if (path === '/proxyMode') {
          res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ipvs');
        } else {
          res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
        }
      },
      bind,
      `--metrics-bind-address ${bind}`,
    );
    return boundAddress(this.server);
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }
}
