/**
 * A health-check node port answers with the local endpoints of the family
 * the request came over, as each of kube-proxy's family proxiers serves
 * the port on its own family's addresses: one listener on "::" serves
 * both, and an IPv4 client must not see the IPv6 slices' count (nor the
 * sum of both).
 */
import t from 'tap';
import pino from 'pino';
import { ServiceHealthServers } from '../../lib/proxy/service-health.js';

// Health-check node ports here are real listeners, in 21000-21999: a range no other test file uses (tap runs two at
// once), below the ephemeral ports where listeners on port 0 land.

t.test('each family answers with its own count', async (t) => {
  const servers = new ServiceHealthServers({ hosts: () => ['::'], logger: pino({ level: 'silent' }), proxyHealthy: () => true });
  t.teardown(() => servers.close());
  const port = 21000 + Math.floor(Math.random() * 500);
  await servers.update([{ namespace: 'demo', name: 'lb', port, localEndpoints: { inet: 1, inet6: 3 }, families: ['inet', 'inet6'] }]);
  t.same(servers.ports(), [port], 'served');
  for (const [host, count] of [['127.0.0.1', 1], ['[::1]', 3]] as const) {
    const r = await fetch(`http://${host}:${port}/`);
    t.equal(r.headers.get('x-load-balancing-endpoint-weight'), String(count), `${host}: the weight`);
    t.match(await r.json(), { localEndpoints: count }, `${host}: the body`);
  }
  await servers.update([{ namespace: 'demo', name: 'lb', port, localEndpoints: { inet: 0, inet6: 3 }, families: ['inet', 'inet6'] }]);
  t.equal((await fetch(`http://127.0.0.1:${port}/`)).status, 503, 'none in IPv4: 503 over IPv4');
  t.equal((await fetch(`http://[::1]:${port}/`)).status, 200, 'while IPv6 still has some');
});

t.test('a single-family Service probed over the other family answers with its own family\'s count', async (t) => {
  const servers = new ServiceHealthServers({ hosts: () => ['::'], logger: pino({ level: 'silent' }), proxyHealthy: () => true });
  t.teardown(() => servers.close());
  const port = 21500 + Math.floor(Math.random() * 500);
  await servers.update([{ namespace: 'demo', name: 'v6', port, localEndpoints: { inet: 0, inet6: 2 }, families: ['inet6'] }]);
  const r = await fetch(`http://127.0.0.1:${port}/`);
  t.equal(r.status, 200, 'an IPv6-only Service probed over IPv4: 200');
  t.match(await r.json(), { localEndpoints: 2 });
});
