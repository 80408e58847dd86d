/**
 * A consumer of the library's IPVS, rtnetlink, netlink and checking
 * declarations as the strictest user compiles it: `strict`,
 * `exactOptionalPropertyTypes`, `noUncheckedIndexedAccess`, and no
 * `skipLibCheck`, so the built .d.ts files are checked too. It is compiled
 * (never run) by test/unit/ipvs-rtnl-types.test.ts, against dist/.
 *
 * It shows that what every read returns can be passed back to the matching
 * write as it is, and the `@ts-expect-error` lines that the declarations
 * still refuse what they must (an `any` would let them through, and an
 * unused `@ts-expect-error` is itself an error).
 */
import {
  Ipvs,
  formatList,
  keyOf,
  type BatchOp,
  type BatchResult,
  type Destination,
  type DestinationSpec,
  type Service,
  type ServiceKey,
  type ServiceRules,
  type ServiceSpec,
  type ServiceWithDestinations,
  type Timeouts,
} from '../../dist/lib/ipvs/index.js';
import { Rtnl, type AddressResult, type InterfaceAddress, type Link, type SplitAddresses } from '../../dist/lib/rtnl/index.js';
import { NetlinkError } from '../../dist/lib/netlink/errors.js';
import { ArgumentRangeError, ArgumentTypeError, isArgumentError, type CheckCode } from '../../dist/lib/util/check.js';
import { parseAddress, type AddressFamily } from '../../dist/lib/util/address.js';

/** dump() with counters, written back: services, destinations, and a batch of both. */
export async function dumpToApply(ipvs: Ipvs): Promise<BatchResult[]> {
  const table: ServiceWithDestinations[] = await ipvs.dump();
  const ops: BatchOp[] = [];
  for (const s of table) {
    await ipvs.addService(s);
    await ipvs.updateService(s);
    ops.push({ op: 'addService', service: s }, { op: 'updateService', service: s }, { op: 'listDestinations', service: s });
    for (const d of s.destinations) {
      await ipvs.addDestination(s, d);
      await ipvs.updateDestination(keyOf(s), d);
      ops.push({ op: 'addDestination', service: s, destination: d }, { op: 'deleteDestination', service: keyOf(s), destination: d });
    }
    ops.push({ op: 'deleteService', service: s });
  }
  return ipvs.apply(ops);
}

/** dump({ stats: false }): the rules alone, written back the same way. */
export async function rulesToApply(ipvs: Ipvs): Promise<BatchResult[]> {
  const rules: ServiceRules[] = await ipvs.dump({ stats: false });
  const ops: BatchOp[] = [];
  for (const s of rules) {
    const spec: ServiceSpec = s;
    ops.push({ op: 'addService', service: spec });
    for (const d of s.destinations) {
      const dest: DestinationSpec = d;
      ops.push({ op: 'addDestination', service: s, destination: dest });
    }
  }
  return ipvs.apply(ops);
}

/** listServices(), getService(), listDestinations() and a batch read, written back. */
export async function listsToWrites(ipvs: Ipvs): Promise<void> {
  const services: Service[] = await ipvs.listServices();
  for (const s of services) {
    const again = await ipvs.getService(s);
    if (again) await ipvs.updateService(again);
    const dests: Destination[] = await ipvs.listDestinations(s);
    await ipvs.apply(dests.map((d): BatchOp => ({ op: 'updateDestination', service: s, destination: d })));
    const [read] = await ipvs.apply([{ op: 'listDestinations', service: s }]);
    if (read?.ok && read.destinations) for (const d of read.destinations) await ipvs.deleteDestination(s, d);
    await ipvs.zero(s);
    await ipvs.deleteService(s);
  }
  const timeouts: Timeouts = await ipvs.getTimeouts();
  await ipvs.setTimeouts(timeouts);
  for (const d of await ipvs.listDaemons()) {
    await ipvs.stopDaemon(d.state);
    await ipvs.startDaemon(d);
  }
  const text: string = formatList(await ipvs.info(), await ipvs.dump());
  void text;
}

/** Each op's result: an error keeps its parts, every one typed. */
export function describeResults(results: readonly BatchResult[]): string[] {
  return results.map((r) => {
    if (r.ok) return `ok${r.destinations ? ` (${r.destinations.length} destinations)` : ''}`;
    const e: NetlinkError = r.error;
    const errno: number = e.errno;
    const code: string = e.code;
    const operation: string = e.operation;
    const subject: unknown = e.subject;
    const kernel: string | undefined = e.kernelMessage;
    const syscall: string | undefined = e.syscall;
    const text: string | undefined = e.text;
    const hint: string | undefined = e.hint;
    const detail: string | undefined = e.detail;
    return [errno, code, operation, JSON.stringify(subject), kernel, syscall, text, hint, detail, e.message].join(' ');
  });
}

/** The links and addresses rtnetlink reads, written back. */
export async function addressesRoundTrip(rt: Rtnl): Promise<AddressResult[]> {
  const link: Link = await rt.ensureDummyLink('kube-ipvs0');
  const found: Link | undefined = await rt.getLink(link.name);
  const split: SplitAddresses = await rt.splitAddresses(found?.name ?? link.name);
  const mine: InterfaceAddress[] = await rt.listAddresses(link.name);
  const cidrs = [...split.on, ...mine].map((a) => `${a.address}/${a.prefixLength}`);
  const removed = await rt.deleteAddresses(link.name, cidrs);
  const added = await rt.addAddresses(link.name, removed.filter((r) => r.ok).map((r) => r.address));
  for (const r of added) if (!r.ok) throw r.error;
  await rt.deleteLink(link.name);
  rt.close();
  return added;
}

/** Argument errors: which kind, and their parts. */
export function argumentProblem(err: unknown): string | undefined {
  if (!isArgumentError(err)) return undefined;
  const code: CheckCode = err.code;
  const kind = err instanceof ArgumentRangeError ? 'range' : err instanceof ArgumentTypeError ? 'type' : 'never';
  return `${kind} ${code} ${err.field}: expected ${err.expected}, got ${String(err.value)}`;
}

export async function opening(): Promise<[Ipvs, Rtnl]> {
  const family: AddressFamily = parseAddress('10.0.0.1', 'address').family;
  void family;
  return [await Ipvs.open({ netns: '/run/netns/x', timeoutMs: 1000 }), await Rtnl.open()];
}

/** What the declarations must refuse. */
export async function refused(ipvs: Ipvs, rt: Rtnl, key: ServiceKey): Promise<void> {
  // @ts-expect-error a port is a number
  await ipvs.addService({ protocol: 'tcp', address: '10.0.0.1', port: '80' });
  // @ts-expect-error no such protocol
  await ipvs.addService({ protocol: 'icmp', address: '10.0.0.1', port: 80 });
  // @ts-expect-error a fwmark service names its family
  await ipvs.getService({ fwmark: 5 });
  // @ts-expect-error no such forwarding method
  await ipvs.addDestination(key, { address: '10.0.1.1', port: 80, forward: 'nat' });
  // @ts-expect-error no such op
  await ipvs.apply([{ op: 'frobService', service: key }]);
  // @ts-expect-error an option is set or left out, not set to undefined
  await ipvs.dump({ stats: undefined });
  // @ts-expect-error the counters are left out of dump({ stats: false })
  (await ipvs.dump({ stats: false }))[0]?.stats;
  // @ts-expect-error addresses are a list
  await rt.addAddresses('kube-ipvs0', '10.0.0.1');
  // @ts-expect-error options are checked too
  await Ipvs.open({ netNs: '/run/netns/x' });
  const r: BatchResult = { ok: true };
  // @ts-expect-error a successful result has no error
  r.error;
}
