/**
 * kube-ipvs0 as the kernel read finds it: made when missing, a dummy one
 * brought up when down, and a link of that name of another kind used as it
 * is, as upstream's EnsureDummyDevice does (it only looks the name up), with
 * one warning however many resyncs read it.
 */
import t from 'tap';
import pino from 'pino';
import type { Link } from 'ipvs-netlink';
import { NamespaceSession } from '../../lib/kernel/namespace-session.js';
import { defaultProxyConfig } from '../../lib/kubernetes/model.js';
import { DUMMY_DEVICE, type DesiredState } from '../../lib/plan/kernel-state.js';

function session(lines: string[]): NamespaceSession {
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
  return new NamespaceSession({ config: defaultProxyConfig(), node: { name: 'node-a', addresses: [] } }, defaultProxyConfig(), logger);
}

/** Clients whose kernel has kube-ipvs0 as given (or none); records each ensureDummyLink. */
function clients(link: Partial<Link> | undefined, ensured: string[]) {
  return {
    ipvs: { dump: async () => [] },
    ipset: { listNames: async () => [] },
    rtnl: {
      splitAddresses: async () => ({ link, on: [{ address: '10.96.0.1', scope: 0 }], elsewhere: [] }),
      ensureDummyLink: async (name: string) => void ensured.push(name),
    },
  } as never;
}

const desired = { ipsets: new Map() } as unknown as DesiredState;

t.test('missing: made', async (t) => {
  const ensured: string[] = [];
  await session([]).read(clients(undefined, ensured), desired);
  t.same(ensured, [DUMMY_DEVICE]);
});

t.test('a dummy that is down: brought up; one that is up: left alone', async (t) => {
  const ensured: string[] = [];
  await session([]).read(clients({ name: DUMMY_DEVICE, kind: 'dummy', up: false }, ensured), desired);
  t.same(ensured, [DUMMY_DEVICE], 'down: ensured');
  ensured.length = 0;
  await session([]).read(clients({ name: DUMMY_DEVICE, kind: 'dummy', up: true }, ensured), desired);
  t.same(ensured, [], 'up: nothing sent');
});

t.test('another kind: used as it is, its addresses read, one warning over many reads', async (t) => {
  for (const kind of ['bridge', '']) {
    const ensured: string[] = [];
    const lines: string[] = [];
    const s = session(lines);
    for (let i = 0; i < 3; i++) {
      const read = await s.read(clients({ name: DUMMY_DEVICE, kind, up: false }, ensured), desired);
      t.same(read.snapshot.boundAddresses, ['10.96.0.1'], `${kind || 'physical'}: the addresses on it are the bound ones`);
    }
    t.same(ensured, [], `${kind || 'physical'}: not replaced, not brought up`);
    const logged = lines.map((l) => JSON.parse(l) as { level: number; msg: string; interface: string; kind: string });
    t.match(logged, [{ level: 40, interface: DUMMY_DEVICE, kind: kind || 'device', msg: /not a dummy device/ }], `${kind || 'physical'}: one warning`);
  }
});
