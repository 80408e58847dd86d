// The process series kube-proxy's Go collector has beyond prom-client's
// defaults: the address-space limit and the network byte counters, read
// from a proc folder as client_golang reads them.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addressSpaceLimit, ipExtOctets, registerGoProcessExtras } from '../../lib/proxy/process-metrics.js';
import { Registry } from '../../lib/proxy/prom-client-parts.js';
import { ProxyMetrics } from '../../lib/proxy/metrics.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max address space         %s            unlimited            bytes
Max open files            1048576              1048576              files
`;
const NETSTAT = `TcpExt: SyncookiesSent SyncookiesRecv
TcpExt: 0 0
IpExt: InNoRoutes InTruncatedPkts InMcastPkts OutMcastPkts InBcastPkts OutBcastPkts InOctets OutOctets InMcastOctets
IpExt: 0 0 0 0 0 0 4890103659 51053329 0
`;

t.test('the limits and netstat texts, as /proc writes them', async (t) => {
  t.equal(addressSpaceLimit(LIMITS.replace('%s', 'unlimited')), 2 ** 64, 'unlimited is the largest 64-bit value, as Go reads it');
  t.equal(addressSpaceLimit(LIMITS.replace('%s', '8589934592')), 8589934592, 'the soft limit');
  t.equal(addressSpaceLimit('Limit Soft Hard\n'), undefined, 'no such line');
  t.same(ipExtOctets(NETSTAT), { in: 4890103659, out: 51053329 }, 'InOctets and OutOctets by their column names');
  t.equal(ipExtOctets('TcpExt: A\nTcpExt: 1\n'), undefined, 'no IpExt lines');
});

t.test('scraped with the HELP texts and types of client_golang', async (t) => {
  const proc = mkdtempSync(join(tmpdir(), 'proc-'));
  t.teardown(() => rmSync(proc, { recursive: true, force: true }));
  mkdirSync(join(proc, 'net'));
  writeFileSync(join(proc, 'limits'), LIMITS.replace('%s', '8589934592'));
  writeFileSync(join(proc, 'net/netstat'), NETSTAT);
  const registry = new Registry();
  registerGoProcessExtras(registry, proc);
  const text = await registry.metrics();
  t.match(text, '# HELP process_virtual_memory_max_bytes Maximum amount of virtual memory available in bytes.\n# TYPE process_virtual_memory_max_bytes gauge\nprocess_virtual_memory_max_bytes 8589934592\n');
  t.match(text, '# HELP process_network_receive_bytes_total Number of bytes received by the process over the network.\n# TYPE process_network_receive_bytes_total counter\nprocess_network_receive_bytes_total 4890103659\n');
  t.match(text, '# HELP process_network_transmit_bytes_total Number of bytes sent by the process over the network.\n# TYPE process_network_transmit_bytes_total counter\nprocess_network_transmit_bytes_total 51053329\n');
  writeFileSync(join(proc, 'net/netstat'), NETSTAT.replace('4890103659', '4890203659'));
  t.match(await registry.metrics(), 'process_network_receive_bytes_total 4890203659\n', 'read again at each scrape');
});

t.test("the proxy's /metrics registry carries all nine of Go's process series", async (t) => {
  const text = await new ProxyMetrics(() => undefined).registry.metrics();
  for (const name of [
    'process_cpu_seconds_total',
    'process_open_fds',
    'process_max_fds',
    'process_virtual_memory_bytes',
    'process_virtual_memory_max_bytes',
    'process_resident_memory_bytes',
    'process_start_time_seconds',
    'process_network_receive_bytes_total',
    'process_network_transmit_bytes_total',
  ]) {
    t.match(text, new RegExp(`^${name} \\d`, 'm'), name);
  }
});
