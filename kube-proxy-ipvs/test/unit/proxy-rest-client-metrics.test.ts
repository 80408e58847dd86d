/**
 * client-go's REST client metrics in the proxy's /metrics, as kube-proxy
 * renders them: the unlabelled ones from the start (the exec plugin's TTL
 * +Inf, its empty rotation histogram, the transport cache), the labelled
 * ones once requests to a fake API server observe them, with client-go's
 * HELP text, stability prefix, buckets and labels: a list counted and
 * timed, a watch counted when its headers arrive and never timed, an
 * answer other than 200 under its code, no answer at all as "<error>".
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { ProxyMetrics } from '../../lib/proxy/metrics.js';
import { hostOf, trackApiRequest } from '../../lib/proxy/rest-client-metrics.js';
import { ApiRequestError, listObjects } from '../../lib/proxy/sources/api-list.js';
import { watchObjects } from '../../lib/proxy/sources/api-watch.js';
import { loadKubeConfig } from '../../lib/proxy/sources/kubeconfig.js';
import { FakeApiServer } from '../support/fake-apiserver.js';

const metrics = new ProxyMetrics(() => undefined, { defaultMetrics: false });
const scrape = () => metrics.registry.metrics();
const lines = async (prefix: string) => (await scrape()).split('\n').filter((l) => l.startsWith(prefix));

async function until(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

t.test('before any request: the unlabelled metrics, and none of the labelled ones', async (t) => {
  const text = await scrape();
  t.match(text, '# HELP rest_client_exec_plugin_ttl_seconds [ALPHA] Gauge of the shortest TTL (time-to-live) of the client certificate(s) managed by the auth exec plugin. The value is in seconds until certificate expiry (negative if already expired). If auth exec plugins are unused or manage no TLS certificates, the value will be +INF.\n# TYPE rest_client_exec_plugin_ttl_seconds gauge\nrest_client_exec_plugin_ttl_seconds +Inf\n');
  t.match(text, '# HELP rest_client_exec_plugin_certificate_rotation_age [ALPHA] Histogram of the number of seconds the last auth exec plugin client certificate lived before being rotated. If auth exec plugin client certificates are unused, histogram will contain no data.\n# TYPE rest_client_exec_plugin_certificate_rotation_age histogram\nrest_client_exec_plugin_certificate_rotation_age_bucket{le="600"} 0\n');
  t.match(text, 'rest_client_exec_plugin_certificate_rotation_age_bucket{le="124416000"} 0\nrest_client_exec_plugin_certificate_rotation_age_bucket{le="+Inf"} 0\n');
  t.match(text, '# HELP rest_client_transport_cache_entries [ALPHA] Number of transport entries in the internal cache.\n# TYPE rest_client_transport_cache_entries gauge\nrest_client_transport_cache_entries 0\n');
  t.match(text, '# HELP rest_client_transport_cert_rotation_gc_calls_total [ALPHA] Number of times a cert rotation goroutine cancel func is called via GC cleanup of the associated transport\n# TYPE rest_client_transport_cert_rotation_gc_calls_total counter\nrest_client_transport_cert_rotation_gc_calls_total 0\n');
  for (const name of ['rest_client_requests_total', 'rest_client_request_duration_seconds_', 'rest_client_request_size_bytes_', 'rest_client_response_size_bytes_', 'rest_client_rate_limiter_duration_seconds_', 'rest_client_transport_create_calls_total']) {
    t.same(await lines(name), [], `${name}: no series before a request`);
  }
  t.notMatch(text, 'rest_client_request_retries_total{', 'no retries: the proxy does not retry within a request');
  t.notMatch(text, 'rest_client_dns_resolution_duration_seconds', 'component-base does not register the DNS histogram');
});

t.test('lists, a watch, an error status and no answer, against a fake API server', async (t) => {
  const api = new FakeApiServer();
  const url = await api.start();
  t.teardown(() => api.close());
  const host = url.slice('http://'.length);
  const kc = loadKubeConfig({ master: url });

  const list = await listObjects(kc, '/api/v1/services', {});
  t.ok(Array.isArray(list.items), 'the list answered');
  const ended: unknown[] = [];
  const controller = await watchObjects(kc, '/api/v1/services', { resourceVersion: list.metadata?.resourceVersion ?? '0' }, () => {}, (err) => ended.push(err));
  t.teardown(() => controller.abort());
  // Counted once its headers arrived, while the stream stays open.
  await until(async () => (await lines(`rest_client_requests_total{code="200"`)).some((l) => l.endsWith(' 2')), 'the watch to be counted');
  t.same(ended, [], 'the watch is still open');

  api.failWith = 500;
  await t.rejects(listObjects(kc, '/api/v1/services', {}), ApiRequestError);
  api.failWith = undefined;

  const closed = await freePort();
  const nowhere = loadKubeConfig({ master: `http://127.0.0.1:${closed}` });
  await t.rejects(listObjects(nowhere, '/api/v1/services', {}));

  const text = await scrape();
  t.match(text, '# HELP rest_client_requests_total [BETA] Number of HTTP requests, partitioned by status code, method, and host.\n# TYPE rest_client_requests_total counter\n');
  t.same(await lines('rest_client_requests_total{'), [
    `rest_client_requests_total{code="200",host="${host}",method="GET"} 2`,
    `rest_client_requests_total{code="500",host="${host}",method="GET"} 1`,
    `rest_client_requests_total{code="<error>",host="127.0.0.1:${closed}",method="GET"} 1`,
  ], 'each attempt by code, the list and the watch under 200, the refused connection as <error>');

  t.match(text, '# HELP rest_client_request_duration_seconds [BETA] Request latency in seconds. Broken down by verb, and host.\n# TYPE rest_client_request_duration_seconds histogram\n');
  const durationBuckets = (await lines('rest_client_request_duration_seconds_bucket{')).filter((l) => l.includes(`host="${host}"`)).map((l) => /le="([^"]+)"/.exec(l)?.[1]);
  t.same(durationBuckets, ['0.005', '0.025', '0.1', '0.25', '0.5', '1', '2', '4', '8', '15', '30', '60', '+Inf'], "client-go's latency buckets");
  t.same(await lines('rest_client_request_duration_seconds_count'), [
    `rest_client_request_duration_seconds_count{host="${host}",verb="GET"} 2`,
    `rest_client_request_duration_seconds_count{host="127.0.0.1:${closed}",verb="GET"} 1`,
  ], 'the lists timed, the failed ones included; the watch not');

  t.match(text, '# HELP rest_client_rate_limiter_duration_seconds [ALPHA] Client side rate limiter latency in seconds. Broken down by verb, and host.\n# TYPE rest_client_rate_limiter_duration_seconds histogram\n');
  t.same(await lines(`rest_client_rate_limiter_duration_seconds_count{host="${host}"`), [`rest_client_rate_limiter_duration_seconds_count{host="${host}",verb="GET"} 2`], 'lists go through the limiter, watches do not');

  t.match(text, '# HELP rest_client_request_size_bytes [ALPHA] Request size in bytes. Broken down by verb and host.\n# TYPE rest_client_request_size_bytes histogram\n');
  t.same(await lines(`rest_client_request_size_bytes_sum{host="${host}"`), [`rest_client_request_size_bytes_sum{host="${host}",verb="GET"} 0`], 'a GET has no body');
  t.same(await lines(`rest_client_request_size_bytes_count{host="${host}"`), [`rest_client_request_size_bytes_count{host="${host}",verb="GET"} 2`]);
  const sizeBuckets = (await lines('rest_client_request_size_bytes_bucket{')).filter((l) => l.includes(`host="${host}"`)).map((l) => /le="([^"]+)"/.exec(l)?.[1]);
  t.same(sizeBuckets, ['64', '256', '512', '1024', '4096', '16384', '65536', '262144', '1048576', '4194304', '16777216', '+Inf'], '64 bytes to 16 MiB');

  t.match(text, '# HELP rest_client_response_size_bytes [ALPHA] Response size in bytes. Broken down by verb and host.\n# TYPE rest_client_response_size_bytes histogram\n');
  t.same(await lines(`rest_client_response_size_bytes_count{host="${host}"`), [`rest_client_response_size_bytes_count{host="${host}",verb="GET"} 2`], 'the list and the 500 with its Status body; the watch not');
  const [sum] = await lines(`rest_client_response_size_bytes_sum{host="${host}"`);
  t.ok(Number(sum?.split(' ')[1]) > 0, 'the bodies measured');
  t.same(await lines(`rest_client_response_size_bytes_count{host="127.0.0.1:${closed}"`), [], 'no answer, no size');

  t.match(text, '# HELP rest_client_transport_create_calls_total [ALPHA] Number of calls to get a new transport, partitioned by the result of the operation hit: obtained from the cache, miss: created and added to the cache, miss-gc: recreated and added back to the cache after being garbage collected, uncacheable: created and not cached\n# TYPE rest_client_transport_create_calls_total counter\nrest_client_transport_create_calls_total{result="miss"} 2\n');
  t.same(await lines('rest_client_transport_cache_entries '), ['rest_client_transport_cache_entries 0'], 'plain http: the default transport, not cached');
});

t.test('a TLS transport enters the cache; a proxy URL makes it uncacheable', async (t) => {
  const tls = new KubeConfig();
  tls.loadFromClusterAndUser({ name: 'c', server: 'https://10.96.0.1:443', skipTLSVerify: false }, { name: 'u', token: 't' });
  trackApiRequest(tls, 'https://10.96.0.1:443', true).failed();
  t.same(await lines('rest_client_transport_cache_entries '), ['rest_client_transport_cache_entries 1']);
  const proxied = new KubeConfig();
  proxied.loadFromClusterAndUser({ name: 'c', server: 'https://10.96.0.1:443', skipTLSVerify: false, proxyUrl: 'http://proxy:3128' }, { name: 'u', token: 't' });
  trackApiRequest(proxied, 'https://10.96.0.1:443', true).failed();
  t.match(await scrape(), 'rest_client_transport_create_calls_total{result="uncacheable"} 1\n');
  t.same(await lines('rest_client_transport_cache_entries '), ['rest_client_transport_cache_entries 1']);
  t.same(await lines('rest_client_requests_total{code="<error>",host="10.96.0.1:443"'), ['rest_client_requests_total{code="<error>",host="10.96.0.1:443",method="GET"} 2'], 'the host keeps its default port, as Go writes it');
});

t.test('the host label is the server URL host as Go parses it', async (t) => {
  t.equal(hostOf('https://10.96.0.1:443'), '10.96.0.1:443');
  t.equal(hostOf('https://[fd00::1]:6443/prefix'), '[fd00::1]:6443');
  t.equal(hostOf('https://user@api.example.com'), 'api.example.com');
  t.equal(hostOf('http://127.0.0.1:8080?x=1'), '127.0.0.1:8080');
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
