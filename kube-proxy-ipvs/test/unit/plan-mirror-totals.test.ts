/**
 * The mirror's totals (real servers, set entries), kept as operations are
 * recorded rather than counted on each read: after any sequence of
 * operations, including repeated and redundant ones, they equal a count
 * of what the mirror holds.
 */
import t from 'tap';
import { Mirror } from '../../lib/plan/mirror.js';
import { virtualServerKey, type NftablesOp, type Operation } from '../../lib/plan/kernel-state.js';

/** A small deterministic generator (mulberry32): the same sequences on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function counted(m: Mirror): { realServers: number; ipsetEntries: number } {
  let realServers = 0;
  for (const vs of m.virtualServers.values()) realServers += vs.destinations.length;
  let ipsetEntries = 0;
  for (const set of m.ipsets.values()) ipsetEntries += set.entries.size;
  return { realServers, ipsetEntries };
}

const service = (i: number) => ({ protocol: 'tcp' as const, address: `10.96.0.${i}`, port: 80 });
const destination = (k: number, weight = 1) => ({ address: `10.1.0.${k}`, port: 8080, weight });

/** One operation of any kind the mirror records, over a few services, destinations, sets and entries so that they collide. */
function anyOperation(r: () => number): Operation {
  const pick = (n: number) => Math.floor(r() * n);
  const svc = service(pick(4));
  const key = pick(2) === 0 ? virtualServerKey(svc) : undefined;
  const set = `KUBE-SET-${pick(3)}`;
  const entries = Array.from({ length: pick(4) }, () => `10.2.0.${pick(6)},tcp:80`);
  switch (pick(12)) {
    case 0: return { kind: 'ipvs', key, batch: { op: 'addService', service: { ...svc, scheduler: 'rr' } } };
    case 1: return { kind: 'ipvs', key, batch: { op: 'deleteService', service: svc } };
    case 2: return { kind: 'ipvs', key, batch: { op: 'updateService', service: { ...svc, scheduler: 'wrr' } } };
    case 3:
    case 4: return { kind: 'ipvs', key, batch: { op: 'addDestination', service: svc, destination: destination(pick(6)) } };
    case 5: return { kind: 'ipvs', key, batch: { op: 'updateDestination', service: svc, destination: destination(pick(6), pick(2)) } };
    case 6: return { kind: 'ipvs', key, batch: { op: 'deleteDestination', service: svc, destination: { address: `10.1.0.${pick(6)}`, port: 8080 } } };
    case 7: return { kind: 'ipset', op: 'create', set, type: 'hash:ip,port', options: { family: 'inet' } };
    case 8: return { kind: 'ipset', op: 'destroy', set };
    case 9: return { kind: 'ipset', op: pick(2) === 0 ? 'add' : 'del', set, entries };
    case 10: return { kind: 'nftables', family: 'inet', op: pick(2) === 0 ? 'add' : 'del', set, entries };
    // The mirror keeps only a table's fingerprint and its sets' elements.
    default: return { kind: 'nftables', family: 'inet', op: 'table', table: { fingerprint: `f${pick(9)}` } as Extract<NftablesOp, { op: 'table' }>['table'], entries: new Map([[set, entries]]) };
  }
}

t.test('after any sequence of operations the totals equal a count of what the mirror holds', async (t) => {
  for (let seed = 1; seed <= 200; seed++) {
    const r = random(seed);
    const m = new Mirror();
    for (let step = 0; step < 60; step++) {
      m.record([anyOperation(r)]);
      const want = counted(m);
      if (m.realServers !== want.realServers || m.ipsetEntries !== want.ipsetEntries) {
        t.fail(`seed ${seed}, step ${step}: totals ${m.realServers} / ${m.ipsetEntries}, counted ${want.realServers} / ${want.ipsetEntries}`);
        return;
      }
    }
  }
  t.pass('200 sequences of 60 operations');
});

t.test('a mirror read from the kernel starts with its totals, and a virtual server read twice counts once', async (t) => {
  const m = Mirror.fromKernel({
    virtualServers: [
      { ...service(1), scheduler: 'rr', destinations: [destination(1), destination(2)] },
      // The same service twice, its address spelt two ways: the later one replaces the earlier.
      { protocol: 'tcp', address: 'fd00:0::2', port: 80, scheduler: 'rr', destinations: [destination(3)] },
      { protocol: 'tcp', address: 'fd00::2', port: 80, scheduler: 'rr', destinations: [destination(4), destination(5)] },
      { fwmark: 7, scheduler: 'rr', destinations: [destination(6)] },
    ],
    ipsets: [
      { name: 'KUBE-CLUSTER-IP', type: 'hash:ip,port', entries: ['10.96.0.1,tcp:80', '10.96.0.2,tcp:80'] },
      { name: 'KUBE-LOOP-BACK', type: 'hash:ip,port,ip', entries: ['10.1.0.1,tcp:8080,10.1.0.1'] },
    ],
    boundAddresses: [],
  });
  t.strictSame({ realServers: m.realServers, ipsetEntries: m.ipsetEntries }, counted(m));
  t.strictSame({ realServers: m.realServers, ipsetEntries: m.ipsetEntries }, { realServers: 4, ipsetEntries: 3 }, 'fwmark services are not kept');
  m.record([{ kind: 'ipset', op: 'destroy', set: 'KUBE-CLUSTER-IP' }, { kind: 'ipvs', batch: { op: 'deleteService', service: service(1) } }]);
  t.strictSame({ realServers: m.realServers, ipsetEntries: m.ipsetEntries }, { realServers: 2, ipsetEntries: 1 });
});
