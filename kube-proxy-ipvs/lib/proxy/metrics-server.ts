/**
 * The metrics server (--metrics-bind-address, default 127.0.0.1:10249):
 * /metrics, plus /healthz, /metrics/slis, /proxyMode and /configz as
 * kube-proxy serves them there (cmd/kube-proxy serveMetrics): plain-text
 * answers with charset and nosniff, /configz the configuration kube-proxy
 * registers (configz.ts) under its group name, marshalled as
 * component-base's configz does (encoding/json, go-json.ts): a value it
 * cannot marshal is a 500 with Go's error text. 0.0.0.0 takes both
 * families, as Go's "tcp" listener does.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { GROUP as CONFIGZ_NAME } from './config-schema.js';
import { type GoJson, marshal, UnsupportedValueError } from './go-json.js';
import { boundAddress, closeServer, listen } from './http-util.js';
import type { ProxyMetrics } from './metrics.js';
import { SliMetrics } from './sli-metrics.js';

const TEXT = { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };

export interface MetricsServerOptions {
  /** The registered configuration, read at each request (configz.ts); without it /configz is 404. */
  configz?: () => unknown;
}

export class MetricsServer {
  private server?: Server;
  private readonly slis = new SliMetrics();

  constructor(
    private readonly metrics: ProxyMetrics,
    private readonly opts: MetricsServerOptions = {},
  ) {}

  async start(bind: string): Promise<string> {
    this.server = await listen((req, res) => this.handle(req, res), bind, `--metrics-bind-address ${bind}`, { dualStackAny: true });
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
    } else if (path === '/healthz') {
      this.healthz(url, res);
    } else if (path === '/healthz/ping') {
      // The check on its own path: Go's plain writer, its type sniffed from "ok".
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('ok');
    } else if (path === '/metrics/slis') {
      if (req.method === 'DELETE') {
        this.slis.reset();
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('metrics reset\n');
        return;
      }
      this.slis.text().then(
        (text) => res.writeHead(200, { 'Content-Type': this.slis.registry.contentType }).end(text),
        (err: Error) => res.writeHead(500, TEXT).end(`${err.message}\n`),
      );
    } else if (path === '/proxyMode') {
      res.writeHead(200, TEXT).end('ipvs');
    } else if (path === '/configz' && this.opts.configz) {
      let body: string;
      try {
        body = marshal({ [CONFIGZ_NAME]: this.opts.configz() as GoJson });
      } catch (err) {
        // write()'s wrapping of json.Marshal's MarshalerError, sent with http.Error.
        const why = err instanceof UnsupportedValueError ? `error marshaling json: json: error calling MarshalJSON for type *configz.Config: ${err.message}` : (err as Error).message;
        res.writeHead(500, TEXT).end(`${why}\n`);
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' }).end(body);
    } else {
      res.writeHead(404, TEXT).end('404 page not found\n');
    }
  }

  /**
   * apiserver's healthz handler with its one check, "ping", which always
   * passes: ?exclude=ping skips it, a name that matches no check is
   * warned about in the verbose body, and each run is recorded for
   * /metrics/slis.
   */
  private healthz(url: URL, res: ServerResponse): void {
    const excluded = new Set(url.searchParams.getAll('exclude'));
    let body: string;
    if (excluded.delete('ping')) {
      body = '[+]ping excluded: ok\n';
    } else {
      this.slis.observe('ping', 'healthz', 'success');
      body = '[+]ping ok\n';
    }
    if (excluded.size > 0) {
      const names = [...excluded].sort().map((n) => JSON.stringify(n));
      body += `warn: some health checks cannot be excluded: no matches for ${names.join(',')}\n`;
    }
    res.writeHead(200, TEXT).end(url.searchParams.has('verbose') ? `${body}healthz check passed\n` : 'ok');
  }
}
