// A tour of the Ipvs client: program a few virtual services, read the table
// back, and print it as `ipvsadm -Ln` would. Run it where IPVS exists:
//   npm run demo            (boots the sandbox kernel when the host has no IPVS)
import { execFileSync } from 'node:child_process';
import { Ipvs, formatList } from 'ipvs-netlink';

// Destinations need a route: give them a dummy link with addresses.
for (const args of [
  ['link', 'add', 'demo0', 'type', 'dummy'],
  ['link', 'set', 'demo0', 'up'],
  ['addr', 'add', '10.244.1.1/24', 'dev', 'demo0'],
  ['-6', 'addr', 'add', 'fd00:244::1/64', 'dev', 'demo0', 'nodad'],
]) execFileSync('ip', args);

const ipvs = await Ipvs.open();
const web = { protocol: 'tcp', address: '10.96.0.10', port: 80 };
const dns = { protocol: 'udp', address: '10.96.0.53', port: 53 };
const v6 = { protocol: 'tcp', address: 'fd00:96::443', port: 443 };

const results = await ipvs.apply([
  { op: 'addService', service: { ...web, scheduler: 'rr' } },
  { op: 'addDestination', service: web, destination: { address: '10.244.1.5', port: 8080 } },
  { op: 'addDestination', service: web, destination: { address: '10.244.1.6', port: 8080, weight: 2 } },
  { op: 'addService', service: { ...dns, scheduler: 'sh', flags: { sched1: true } } },
  { op: 'addDestination', service: dns, destination: { address: '10.244.1.7', port: 53 } },
  { op: 'addService', service: { ...v6, scheduler: 'wlc', persistent: { timeout: 300, netmask: 64 } } },
  { op: 'addDestination', service: v6, destination: { address: 'fd00:244::5', port: 8443 } },
  { op: 'addService', service: { fwmark: 42, family: 'inet', scheduler: 'mh' } },
  { op: 'addDestination', service: { fwmark: 42, family: 'inet' }, destination: { address: '10.244.1.8', port: 0, forward: 'route' } },
  // Fails on purpose: the service exists already. The others are applied.
  { op: 'addService', service: { ...web, scheduler: 'rr' } },
]);
const failed = results.map((r, i) => (r.ok ? null : `  op ${i}: ${r.error.message}`)).filter(Boolean);
console.log(`applied ${results.length - failed.length} of ${results.length} operations in one batch`);
if (failed.length) console.log(failed.join('\n'));

console.log(`\n${formatList(await ipvs.info(), await ipvs.dump())}`);
const c = ipvs.counters();
console.log(`netlink: ${c.messagesSent} messages in ${c.sendmsgCalls} sendmsg calls`);
ipvs.close();
