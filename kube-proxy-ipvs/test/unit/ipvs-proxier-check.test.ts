/**
 * The start-up scheduler check, as upstream's CanUseIPVSProxier: the calls
 * it makes (list; add and delete the dummy 198.51.100.0:20000/TCP unless a
 * virtual server already uses the scheduler) and the messages it fails
 * with ("can't use the IPVS proxier: <errno text>" and our hint). The
 * kernel's side is test/kernel/proxy-scheduler-check.test.ts.
 */
import t from 'tap';
import pino from 'pino';
import { NetlinkError } from 'ipvs-netlink';
import { checkIpvsProxier, INIT_ONLY, IpvsProxierError, logProxierFamilies, logProxierMode, type ProxierLines } from '../../lib/kernel/ipvs-proxier-check.js';
import { controllerOptionsFor } from '../../lib/proxy/controller-start.js';
import { resolveOptions } from '../../lib/proxy/resolve-options.js';

const DUMMY = { protocol: 'tcp', address: '198.51.100.0', port: 20000 };
const silent = pino({ level: 'silent' });

function refusal(operation: string, errno: number, code: string, text: string): NetlinkError {
  return new NetlinkError({ errno, code, operation, text, hint: 'the library hint' });
}

/** A fake client recording its calls; `fail` refuses one operation. */
function fake(services: Array<{ scheduler: string }>, fail: Partial<Record<'listServices' | 'addService' | 'deleteService', Error>> = {}) {
  const calls: Array<[string, unknown?]> = [];
  const call = async (op: 'listServices' | 'addService' | 'deleteService', arg?: unknown) => {
    calls.push(arg === undefined ? [op] : [op, arg]);
    if (fail[op]) throw fail[op];
  };
  const client = {
    listServices: async () => (await call('listServices'), services),
    addService: (spec: unknown) => call('addService', spec),
    deleteService: (key: unknown) => call('deleteService', key),
  };
  return { client: client as never, calls };
}

t.test('adds the dummy virtual server with the scheduler, then deletes it', async (t) => {
  const { client, calls } = fake([{ scheduler: 'wlc' }]);
  await checkIpvsProxier(client, 'sh', silent);
  t.same(calls, [['listServices'], ['addService', { ...DUMMY, scheduler: 'sh' }], ['deleteService', DUMMY]]);
});

t.test('an empty scheduler is rr, as upstream defaults it', async (t) => {
  const { client, calls } = fake([]);
  await checkIpvsProxier(client, '', silent);
  t.same(calls[1], ['addService', { ...DUMMY, scheduler: 'rr' }]);
});

t.test('a virtual server already using the scheduler (a restart) passes without the dummy', async (t) => {
  const { client, calls } = fake([{ scheduler: 'wlc' }, { scheduler: 'mh' }]);
  await checkIpvsProxier(client, 'mh', silent);
  t.same(calls, [['listServices']]);
});

t.test("a scheduler the kernel has no module for: upstream's message, the field and module named; nothing to delete", async (t) => {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
  const { client, calls } = fake([], { addService: refusal('addService', 2, 'ENOENT', 'No such file or directory') });
  const err = await checkIpvsProxier(client, 'twos', logger).catch((e: unknown) => e);
  t.type(err, IpvsProxierError);
  t.equal((err as IpvsProxierError).code, 'ENOENT');
  t.equal(
    (err as Error).message,
    `can't use the IPVS proxier: no such file or directory (--ipvs-scheduler (ipvs.scheduler) "twos": the kernel has no IPVS scheduler of that name: ` +
      'module ip_vs_twos is not loaded and could not be loaded; load it on the node (modprobe ip_vs_twos) or choose another scheduler)',
  );
  t.same(calls, [['listServices'], ['addService', { ...DUMMY, scheduler: 'twos' }]], 'the add was refused: no delete');
  t.match(JSON.parse(lines[0]) as object, { level: 50, msg: 'Could not create dummy VS', scheduler: 'twos' }, 'logged as upstream logs it');
});

t.test("a name no Linux scheduler has: the same refusal, and the kernel's usual names", async (t) => {
  const { client } = fake([], { addService: refusal('addService', 2, 'ENOENT', 'No such file or directory') });
  await t.rejects(checkIpvsProxier(client, 'fastest', silent), {
    message: /^can't use the IPVS proxier: no such file or directory \(--ipvs-scheduler \(ipvs\.scheduler\) "fastest": the kernel has no IPVS scheduler of that name \(no module ip_vs_fastest\); Linux's IPVS schedulers are rr, wrr, .*twos\)$/,
  });
});

t.test('a leftover dummy with another scheduler fails as upstream ("file exists"), saying how to remove it', async (t) => {
  const { client } = fake([{ scheduler: 'rr' }], { addService: refusal('addService', 17, 'EEXIST', 'File exists') });
  await t.rejects(checkIpvsProxier(client, 'sh', silent), {
    message: /^can't use the IPVS proxier: file exists \(a virtual server 198\.51\.100\.0:20000\/TCP exists .*ipvsadm -D -t 198\.51\.100\.0:20000\)/,
  });
});

t.test("listing fails: upstream's runner's words", async (t) => {
  const { client, calls } = fake([], { listServices: refusal('listServices', 1, 'EPERM', 'Operation not permitted') });
  await t.rejects(checkIpvsProxier(client, 'rr', silent), { message: /^can't use the IPVS proxier: could not get IPVS services: operation not permitted \(the process lacks CAP_NET_ADMIN/ });
  t.same(calls, [['listServices']]);
});

t.test('the delete fails: the start fails with its errno', async (t) => {
  const { client } = fake([], { deleteService: refusal('deleteService', 3, 'ESRCH', 'No such process') });
  await t.rejects(checkIpvsProxier(client, 'rr', silent), { message: /^can't use the IPVS proxier: no such process/ });
});

t.test("a name the library will not send fails as the kernel would answer upstream's unchecked one, once, naming the flag", async (t) => {
  const { Ipvs } = await import('ipvs-netlink');
  // The library's checks run before anything is sent, so a handle that was never opened is enough.
  const library = Object.create(Ipvs.prototype) as { addService(spec: unknown): Promise<void> };
  const refusedBy = async (scheduler: string) => {
    try {
      await library.addService({ ...DUMMY, scheduler });
    } catch (err) {
      return err as Error;
    }
    throw new Error('the library took it');
  };
  const cases: Array<[string, RegExp]> = [
    ['averyveryverylongname', /^can't use the IPVS proxier: invalid argument \(--ipvs-scheduler \(ipvs\.scheduler\) "averyveryverylongname": a scheduler's name is at most 15 bytes; Linux's IPVS schedulers are rr, /],
    ['rr wrr', /^can't use the IPVS proxier: no such file or directory \(--ipvs-scheduler \(ipvs\.scheduler\) "rr wrr": the kernel has no IPVS scheduler of that name \(no module ip_vs_rr wrr\); /],
  ];
  for (const [scheduler, expected] of cases) {
    const refusedError = await refusedBy(scheduler);
    const { client } = fake([], { addService: refusedError });
    const err = await checkIpvsProxier(client, scheduler, silent).then(
      () => undefined,
      (e: unknown) => e as IpvsProxierError,
    );
    t.ok(err instanceof IpvsProxierError, scheduler);
    t.match(err?.message, expected, scheduler);
    t.notMatch(err?.message, /service\.scheduler/, `${scheduler}: the library's field name is not the user's`);
  }
});

t.test("createProxier's and NewProxier's lines: the mode, and each family's, with the family in them", async (t) => {
  const periods = { minSyncPeriod: '0s', syncPeriod: '30s' };
  const lines = (node: { name: string; addresses: string[]; families?: Array<'inet' | 'inet6'> }, proxierLines?: ProxierLines | typeof INIT_ONLY) => {
    const out: string[] = [];
    const at = (level: string) => (fields: object | string, msg?: string) => void out.push(typeof fields === 'string' ? `${level} ${fields}` : `${level} ${msg} ${JSON.stringify(fields)}`);
    const logger = { info: at('I'), debug: at('V2') } as never;
    logProxierMode(logger);
    logProxierFamilies(logger, node, proxierLines);
    return out;
  };
  const dual = { name: 'n', addresses: ['192.0.2.1'], families: ['inet', 'inet6'] as Array<'inet' | 'inet6'> };
  t.same(
    lines(dual, { schedulerDefaulted: true, ...periods }),
    [
      'I Using ipvs Proxier',
      'V2 Record nodeIP and family {"ipFamily":"IPv4","nodeIP":"192.0.2.1","family":"IPv4"}',
      'I IPVS scheduler not specified, use rr by default {"ipFamily":"IPv4"}',
      'V2 ipvs sync params {"ipFamily":"IPv4","minSyncPeriod":"0s","syncPeriod":"30s","burstSyncs":2}',
      'V2 Record nodeIP and family {"ipFamily":"IPv6","nodeIP":"::1","family":"IPv6"}',
      'I IPVS scheduler not specified, use rr by default {"ipFamily":"IPv6"}',
      'V2 ipvs sync params {"ipFamily":"IPv6","minSyncPeriod":"0s","syncPeriod":"30s","burstSyncs":2}',
    ],
    'the host serves both families, whatever the addresses; a family without a node IP records loopback, as detectNodeIPs',
  );
  t.notMatch(lines(dual, { schedulerDefaulted: false, ...periods }).join('\n'), /scheduler not specified/, 'a scheduler named: nothing about it');
  t.same(lines({ name: 'n', addresses: ['192.0.2.1'] }, { schedulerDefaulted: true, ...periods }).filter((l) => l.startsWith('I ')), ['I Using ipvs Proxier', 'I IPVS scheduler not specified, use rr by default {"ipFamily":"IPv4"}'], 'one family');
  t.same(
    lines(dual, INIT_ONLY),
    [
      'I Using ipvs Proxier',
      'I System initialized and --init-only specified {"ipFamily":"IPv4"}',
      'I System initialized and --init-only specified {"ipFamily":"IPv6"}',
    ],
    '--init-only: NewProxier of each family says it returns, and says nothing more',
  );
  t.same(lines({ name: 'n', addresses: [], families: ['inet6'] }, INIT_ONLY), ['I Using ipvs Proxier', 'I System initialized and --init-only specified {"ipFamily":"IPv6"}'], '--init-only on a single-stack host: that family, though no node address is known');
  t.same(lines(dual), ['I Using ipvs Proxier'], 'no lines given (a controller made outside the binary): only the mode, on a dual-stack host too (the release followed no longer says "Creating dualStackProxier for ipvs")');
});

t.test('the scheduler counts as defaulted only when the configuration left it empty', async (t) => {
  const at = (argv: string[]) => (controllerOptionsFor(resolveOptions([...argv, '--hostname-override', 'n']).options, { name: 'n', addresses: [] }, silent).proxierLines as ProxierLines).schedulerDefaulted;
  t.equal(at([]), true, 'no flag, no file: empty, as upstream leaves it (the proxy then uses rr)');
  t.equal(at(['--ipvs-scheduler', 'rr']), false, 'rr named is not defaulted');
  t.equal(at(['--ipvs-scheduler', 'lc']), false);
});

t.test('the sync periods NewProxier logs are the configuration\'s, as Go writes a duration', async (t) => {
  const lines = (argv: string[]) => controllerOptionsFor(resolveOptions([...argv, '--hostname-override', 'n']).options, { name: 'n', addresses: [] }, silent).proxierLines;
  t.match(lines([]), { minSyncPeriod: '1s', syncPeriod: '30s' }, 'flags alone: the flags\' defaults');
  t.match(lines(['--ipvs-sync-period', '90s', '--ipvs-min-sync-period', '1500ms']), { minSyncPeriod: '1.5s', syncPeriod: '1m30s' });
});
