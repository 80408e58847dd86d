/**
 * A request that never gets a reply: the promise rejects with ETIMEDOUT
 * after timeoutMs (no endless retry on EAGAIN), the socket is thrown away,
 * and the next call works on a fresh one. The kernel here is real; the
 * socket is told to discard what it reads (a test-only switch), which is
 * what a lost reply looks like from user space.
 */
import t from 'tap';
import { Ipvs, NetlinkError } from '../../lib/index.js';
import { freshNetns } from '../support/netns.js';

t.test('a lost reply times out, the socket is replaced, later calls work', async (t) => {
  const ns = await freshNetns(t);
  const ipvs = await Ipvs.open({ netns: ns.path, timeoutMs: 300, testDeafSockets: 1 } as Parameters<typeof Ipvs.open>[0]);
  t.teardown(() => ipvs.close());
  const svc = { protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr' } as const;

  const err = await ipvs.addService(svc).then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof NetlinkError, 'rejects with a NetlinkError');
  t.equal((err as NetlinkError).code, 'ETIMEDOUT');
  t.match((err as NetlinkError).message, /no reply from the kernel within 300 ms/);

  // The kernel did apply the request; only its answer was lost. The next
  // call runs on a new socket and sees it.
  const services = await ipvs.listServices();
  t.match(services, [{ protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr' }]);
  t.equal((await ns.exec('ipvsadm', ['-Sn'])).trim(), '-A -t 10.0.0.1:80 -s rr');
  await ipvs.addDestination(svc, { address: '10.0.0.2', port: 80 }).catch((e) => e);
  t.equal((await ipvs.listDestinations(svc)).length, 1, 'later calls work');
});
