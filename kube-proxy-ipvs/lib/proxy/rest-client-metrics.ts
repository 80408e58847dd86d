/**
 * client-go's REST client metrics, which kube-proxy's /metrics carries
 * (cmd/kube-proxy imports component-base's metrics/prometheus/restclient,
 * whose init registers them): the same names, types, labels, buckets and
 * HELP text with component-base's stability prefix. Like client-go's, they
 * are one set per process; ProxyMetrics registers them in its registry.
 *
 * Every API request passes through trackApiRequest (sources/api-list.ts
 * calls it for lists and watches alike), which observes what client-go's
 * rest.Request observes for each:
 *
 *  - a list (Request.Do): the rate limiter's wait before it, every attempt
 *    counted in rest_client_requests_total once the response headers arrive
 *    (or with code "<error>" when there was no response), the request's
 *    size (0: a GET has no body), the whole request's duration once the
 *    body is read or the request failed, and the response body's size
 *    when it was read (an answer other than 2xx only with a body);
 *  - a watch (Request.Watch): only its count in rest_client_requests_total,
 *    when its response headers arrive. client-go neither rate-limits nor
 *    times watches, nor measures their sizes.
 *
 * Labels as client-go gives them: the verb is the HTTP method, "GET"; the
 * host is the server URL's host as Go's url.Parse leaves it, with the port
 * as written ("10.96.0.1:443", where the WHATWG URL parser drops a default
 * port). Labels are written in Go's order (sorted by name).
 *
 * Not rendered, as in kube-proxy without the cases that observe them:
 * rest_client_request_retries_total (the proxy does not retry within a
 * request: a failed informer restarts with a new one), the exec plugin's
 * call counter, the transport's CA reload and cache-GC counters. The DNS
 * resolution histogram is never rendered: component-base defines it but
 * does not register it.
 */
import type * as Http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { Counter, Gauge, Histogram, type Registry } from './prom-client-parts.js';

/** component-base writes the stability level before the HELP text. */
const alpha = (help: string) => `[ALPHA] ${help}`;
const beta = (help: string) => `[BETA] ${help}`;

const LATENCY_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
/** 64 bytes to 16 MiB. */
const SIZE_BUCKETS = [64, 256, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216];
/** 10 and 30 minutes, 1 and 4 hours, a day, a week, 1, 3 and 6 months, 1 and 4 years. */
const ROTATION_BUCKETS = [600, 1800, 3600, 14400, 86400, 604800, 2592000, 7776000, 15552000, 31104000, 124416000];

const requestLatency = new Histogram({
  name: 'rest_client_request_duration_seconds',
  help: beta('Request latency in seconds. Broken down by verb, and host.'),
  labelNames: ['host', 'verb'],
  buckets: LATENCY_BUCKETS,
  registers: [],
});
const requestSize = new Histogram({
  name: 'rest_client_request_size_bytes',
  help: alpha('Request size in bytes. Broken down by verb and host.'),
  labelNames: ['host', 'verb'],
  buckets: SIZE_BUCKETS,
  registers: [],
});
const responseSize = new Histogram({
  name: 'rest_client_response_size_bytes',
  help: alpha('Response size in bytes. Broken down by verb and host.'),
  labelNames: ['host', 'verb'],
  buckets: SIZE_BUCKETS,
  registers: [],
});
const rateLimiterLatency = new Histogram({
  name: 'rest_client_rate_limiter_duration_seconds',
  help: alpha('Client side rate limiter latency in seconds. Broken down by verb, and host.'),
  labelNames: ['host', 'verb'],
  buckets: LATENCY_BUCKETS,
  registers: [],
});
const requestResult = new Counter({
  name: 'rest_client_requests_total',
  help: beta('Number of HTTP requests, partitioned by status code, method, and host.'),
  labelNames: ['code', 'host', 'method'],
  registers: [],
});
// The exec plugin's certificate metrics have no labels, so they render from the start; without an exec plugin the TTL is +Inf.
const execPluginCertTTL = new Gauge({
  name: 'rest_client_exec_plugin_ttl_seconds',
  help: alpha(
    'Gauge of the shortest TTL (time-to-live) of the client certificate(s) managed by the auth exec plugin. The value is in seconds until certificate expiry (negative if already expired). If auth exec plugins are unused or manage no TLS certificates, the value will be +INF.',
  ),
  registers: [],
});
execPluginCertTTL.set(Infinity);
const execPluginCertRotation = new Histogram({
  name: 'rest_client_exec_plugin_certificate_rotation_age',
  help: alpha(
    'Histogram of the number of seconds the last auth exec plugin client certificate lived before being rotated. If auth exec plugin client certificates are unused, histogram will contain no data.',
  ),
  buckets: ROTATION_BUCKETS,
  registers: [],
});
const transportCacheEntries = new Gauge({
  name: 'rest_client_transport_cache_entries',
  help: alpha('Number of transport entries in the internal cache.'),
  registers: [],
});
const transportCreateCalls = new Counter({
  name: 'rest_client_transport_create_calls_total',
  help: alpha(
    'Number of calls to get a new transport, partitioned by the result of the operation hit: obtained from the cache, miss: created and added to the cache, miss-gc: recreated and added back to the cache after being garbage collected, uncacheable: created and not cached',
  ),
  labelNames: ['result'],
  registers: [],
});
const transportCertRotationGCCalls = new Counter({
  name: 'rest_client_transport_cert_rotation_gc_calls_total',
  help: alpha('Number of times a cert rotation goroutine cancel func is called via GC cleanup of the associated transport'),
  registers: [],
});

const ALL: Parameters<Registry['registerMetric']>[0][] = [
  requestLatency,
  requestSize,
  responseSize,
  rateLimiterLatency,
  requestResult,
  execPluginCertTTL,
  execPluginCertRotation,
  transportCacheEntries,
  transportCreateCalls,
  transportCertRotationGCCalls,
];

/** Adds the REST client metrics to `registry` (kube-proxy has them in the legacy registry). */
export function registerRestClientMetrics(registry: Registry): void {
  for (const m of ALL) registry.registerMetric(m);
}

/** The host of a server URL as Go's url.Parse gives it: the authority without user info, the port as written. */
export function hostOf(server: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(server)?.[1] ?? '';
  return authority.slice(authority.lastIndexOf('@') + 1);
}

/** The KubeConfigs a transport was made for (client-go makes one per client; the proxy has one). */
const transports = new WeakSet<KubeConfig>();
/** The TLS transports client-go would hold in its cache: one per TLS-using KubeConfig here. */
let cachedTransports = 0;

/**
 * client-go's transport cache, as kube-proxy's one client meets it: a
 * config with a proxy URL is uncacheable; any other is a miss the first
 * time, and enters the cache only when it needs TLS (plain http uses the
 * default transport, uncached).
 */
function transportFor(kc: KubeConfig): void {
  if (transports.has(kc)) return;
  transports.add(kc);
  const cluster = kc.getCurrentCluster();
  if (cluster?.proxyUrl) {
    transportCreateCalls.inc({ result: 'uncacheable' });
    return;
  }
  transportCreateCalls.inc({ result: 'miss' });
  if (!cluster?.server.startsWith('http://')) cachedTransports++;
  transportCacheEntries.set(cachedTransports);
}

/** What the request wrapper reports: the response once its headers arrive, or the error that ended the request. */
export interface RequestTracker {
  responded(res: Http.IncomingMessage): void;
  failed(): void;
}

/**
 * Starts observing one request (a GET; a watch when `watch`) to the
 * current cluster of `kc`: call `responded` when the response headers
 * arrive, `failed` when the request ends in an error. Either may come
 * more than once (an aborted watch fails after it responded); the attempt
 * is counted once.
 */
export function trackApiRequest(kc: KubeConfig, server: string, watch: boolean, verb = 'GET', requestBytes = 0): RequestTracker {
  transportFor(kc);
  const host = hostOf(server);
  const start = process.hrtime.bigint();
  // kube-proxy's client-side limiter (--kube-api-qps, --kube-api-burst) lets its few lists through at once; the proxy has none and waits 0 s.
  if (!watch) rateLimiterLatency.observe({ host, verb }, 0);
  let counted = false;
  let finished = false;
  const count = (code: string) => {
    if (counted) return false;
    counted = true;
    requestResult.inc({ code, host, method: verb });
    if (!watch) requestSize.observe({ host, verb }, requestBytes);
    return true;
  };
  const finish = (bodyBytes: number | undefined) => {
    if (watch || finished) return;
    finished = true;
    requestLatency.observe({ host, verb }, Number(process.hrtime.bigint() - start) / 1e9);
    if (bodyBytes !== undefined) responseSize.observe({ host, verb }, bodyBytes);
  };
  return {
    responded(res) {
      if (!count(String(res.statusCode ?? 0)) || watch) return;
      const status = res.statusCode ?? 0;
      let bytes = 0;
      res.on('data', (chunk: Buffer | string) => (bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length));
      // client-go's Do observes the body's size unless the answer is an error without one.
      res.on('end', () => finish(status >= 200 && status <= 206 ? bytes : bytes > 0 ? bytes : undefined));
      res.on('error', () => finish(undefined));
      res.on('close', () => finish(undefined));
    },
    failed() {
      count('<error>');
      finish(undefined);
    },
  };
}
