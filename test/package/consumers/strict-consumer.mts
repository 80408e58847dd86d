// A TypeScript program a strict user would write, compiled against the
// installed package's declarations with strict, exactOptionalPropertyTypes
// and no skipLibCheck (tsconfig.strict.json). It follows the README's
// examples; only `main()`'s last part runs (it needs no IPVS).
import { Ipset, IpsetBulkError, Ipvs, NetlinkError, Rtnl, formatList, keyOf } from 'ipvs-netlink';
import type { BatchOp, BatchResult, Destination, ServiceKey, ServiceSpec } from 'ipvs-netlink';
import { canonicalAddress, cidrContains, parseCidr } from 'ipvs-netlink/address';

export async function programIpvs(): Promise<string> {
  const ipvs = await Ipvs.open({ netns: '/run/netns/blue', timeoutMs: 2000 });
  const web = { protocol: 'tcp', address: '10.96.0.10', port: 80 } as const;
  const spec: ServiceSpec = { ...web, scheduler: 'rr', persistent: { timeout: 300, netmask: 24 } };
  await ipvs.addService(spec);
  await ipvs.addDestination(web, { address: '10.244.1.5', port: 8080, weight: 2 });
  const ops: BatchOp[] = [
    { op: 'addDestination', service: web, destination: { address: '10.244.1.6', port: 8080 } },
    { op: 'listDestinations', service: web },
  ];
  const results: BatchResult[] = await ipvs.apply(ops);
  for (const r of results) {
    if (r.ok) r.destinations?.forEach((d: Destination) => d.activeConns + d.inactiveConns);
    else console.log(r.error.code, r.error.operation);
  }
  // What a read returns goes back into the matching write.
  for (const service of await ipvs.dump({ stats: false })) {
    const key: ServiceKey = keyOf(service);
    await ipvs.updateService(service);
    for (const d of service.destinations) await ipvs.updateDestination(key, d);
  }
  try {
    await ipvs.deleteService({ protocol: 'udp', address: '10.96.0.53', port: 53 });
  } catch (e) {
    if (e instanceof NetlinkError) console.log(e.code, e.operation, e.message);
  }
  const table = formatList(await ipvs.info(), await ipvs.dump());
  ipvs.close();
  return table;
}

export async function programIpset(entries: string[]): Promise<void> {
  const ipset = await Ipset.open();
  await ipset.create('KUBE-CLUSTER-IP', 'hash:ip,port', { hashSize: 1024, maxElem: 65536 });
  await ipset.add('KUBE-CLUSTER-IP', '10.96.0.10,tcp:53', { exist: true });
  try {
    await ipset.addMany('KUBE-CLUSTER-IP', entries);
  } catch (e) {
    if (e instanceof IpsetBulkError) console.log(e.applied, e.failures.map((f) => `${f.index} ${f.entry} ${f.code}`));
  }
  const listed = await ipset.list('KUBE-CLUSTER-IP');
  await ipset.replace('KUBE-CLUSTER-IP', listed.entries);
  ipset.close();
}

export async function programLinks(): Promise<void> {
  const rt = await Rtnl.open();
  await rt.ensureDummyLink('kube-ipvs0');
  await rt.addAddresses('kube-ipvs0', ['10.96.0.10', 'fd00:96::10']);
  console.log(await rt.listAddresses('kube-ipvs0'));
  rt.close();
}

async function main(): Promise<void> {
  const checks = { address: canonicalAddress('FD00::1') === 'fd00::1' && cidrContains(parseCidr('10.0.0.0/8', 'clusterCIDR'), '10.1.2.3') };
  const set = await Ipset.open();
  try {
    await set.destroy('pkg-test-no-such-set');
    console.log(JSON.stringify({ ...checks, error: 'none' }));
  } catch (e) {
    console.log(JSON.stringify({ ...checks, error: e instanceof NetlinkError ? e.code : String(e) }));
  } finally {
    set.close();
  }
}
await main();
