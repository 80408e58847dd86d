/**
 * The program test/sanitizer/threads.test.ts runs under ThreadSanitizer:
 * the addon's threads at work while the JavaScript thread keeps using the
 * same handles. A handle's counters() is read on every turn of the event
 * loop (as the proxy's metrics read them) while its jobs count on a worker
 * and while a job replaces the socket after a timeout; close() comes while
 * a call waits for its answer; a conntrack event stream's reader thread,
 * and an nf_tables one's, hand events over while they are taken, and each
 * stream is closed while events still come.
 *
 *   node test/sanitizer/handles-across-threads.mjs NETNS_NAME [host|ipvs]
 *
 * host (the default): ipset, rtnetlink, conntrack and nf_tables, which this machine's
 * kernel has. ipvs: IPVS, for a kernel that has it (the QEMU sandbox's:
 * the sanitizer's runtime cannot start in user-mode-linux, whose processes
 * have too little address space for it): an apply() and a dump() with the
 * counters read throughout (a dump's records reach JavaScript in chunks
 * from the worker while it reads on), and a dump closed as it starts.
 *
 * Plain JavaScript against the built library: under the sanitizer every
 * step of node is many times slower, and a TypeScript loader adds nothing
 * to what is being watched. Prints one JSON line of what each part did,
 * and whether the sanitizer's runtime is loaded.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';

import { Conntrack, Ipset, Ipvs, Nftables, Rtnl } from '../../dist/lib/index.js';

const run = promisify(execFile);
const [name, part = 'host'] = process.argv.slice(2);
const netns = `/run/netns/${name}`;
const out = { part, sanitizer: readFileSync('/proc/self/maps', 'utf8').includes('libtsan') };
let reads = 0;
const ip = (i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

/** Runs `work`, reading the handle's counters on every turn of the event loop until it settles. */
async function whileReading(handle, work) {
  let settled = false;
  const p = work();
  const mark = () => {
    settled = true;
  };
  p.then(mark, mark);
  while (!settled) {
    handle.counters();
    reads++;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return p;
}

/** The conntrack tool in the namespace, without the sanitizer (it is not what is watched). */
function tool(script) {
  const { LD_PRELOAD, ...env } = process.env;
  return run('ip', ['netns', 'exec', name, 'bash', '-c', script], { env });
}

/** ipset, rtnetlink, conntrack and nf_tables. */
async function hostPart() {
  // ipset: the first socket never hears back, so the call times out and the
  // job drops the socket for a fresh one; then a load through a small receive
  // buffer (many sendmsg calls).
  const ipset = await Ipset.open({ netns, timeoutMs: 300, testDeafSockets: 1, testRcvbuf: 128 * 1024 });
  out.timedOut = await whileReading(ipset, () => ipset.listNames()).then(
    () => false,
    (e) => e.code === 'ETIMEDOUT',
  );
  await ipset.create('load', 'hash:ip', { hashSize: 65536, maxElem: 1_000_000 });
  const entries = Array.from({ length: 20_000 }, (_, i) => ip(i));
  out.added = await whileReading(ipset, () => ipset.addMany('load', entries));
  // close() while a call waits for its answer: a second handle whose socket
  // never hears back, closed once its request is out. The job holds the
  // channel when close() comes, so close() only flags it; the job sees the
  // flag, and the socket goes when it lets go.
  const deaf = await Ipset.open({ netns, timeoutMs: 1000, testDeafSockets: 1 });
  const opened = deaf.counters().messagesSent; // open() agreed the protocol on that socket
  const waiting = deaf.listNames();
  while (deaf.counters().messagesSent === opened) await new Promise((resolve) => setImmediate(resolve));
  deaf.close();
  out.closedWhileWaiting = await waiting.then(
    () => 'answered',
    (e) => e.code,
  );
  out.ipsetCounters = ipset.counters();
  ipset.close();

  // rtnetlink: a batch of addresses on the namespace's loopback (every
  // kernel has it; it may hold its own 127.0.0.1 and ::1 too), and a dump.
  const rtnl = await Rtnl.open({ netns });
  const addresses = Array.from({ length: 2_000 }, (_, i) => `${ip(0x0a0000 + i)}/32`);
  const results = await whileReading(rtnl, () => rtnl.addAddresses('lo', addresses));
  out.addressesAdded = results.filter((r) => r.ok).length;
  out.addressesListed = (await whileReading(rtnl, () => rtnl.listAddresses('lo'))).filter((a) => a.address.startsWith('10.')).length;
  out.rtnlCounters = rtnl.counters();
  rtnl.close();

  // conntrack: entries the tool creates, seen as events from the stream's
  // reader thread, then the stream closed while the tool deletes them all.
  const ct = await Conntrack.open({ netns });
  const stream = await ct.events({ types: ['new', 'destroy'] });
  const created = tool('for p in $(seq 1 300); do conntrack -I -p udp -s 10.1.0.1 -d 10.2.0.1 --sport $p --dport 53 -t 60 2>/dev/null; done');
  let seen = 0;
  for (let r = await stream.next(); !r.done; r = await stream.next()) {
    ct.counters();
    reads++;
    if (r.value.type === 'new' && ++seen === 300) break;
  }
  await created;
  out.eventsSeen = seen;
  const deleted = tool('conntrack -D -p udp 2>/dev/null; true');
  await new Promise((resolve) => setTimeout(resolve, 5));
  stream.close();
  await deleted;
  out.conntrackCount = await ct.count();
  ct.close();

  // nf_tables: the tool's transaction announced from the stream's reader
  // thread while they are taken, then the stream closed while the tool
  // still commits.
  const nft = await Nftables.open({ netns });
  const events = await nft.events();
  const elements = Array.from({ length: 500 }, (_, i) => ip(0x0b000000 + i)).join(', ');
  const committed = tool(`nft -f - <<'X'\ntable ip t { set s { type ipv4_addr; elements = { ${elements} }; }; }\nX`);
  let announced = 0;
  for (let r = await events.next(); !r.done; r = await events.next()) {
    nft.counters();
    reads++;
    if (r.value.type === 'change' && r.value.change.op === 'addElements') announced += r.value.change.elements.length;
    if (r.value.type === 'commit') break;
  }
  await committed;
  out.elementsAnnounced = announced;
  const more = tool('for i in $(seq 1 50); do nft add table ip x$i; done');
  await new Promise((resolve) => setTimeout(resolve, 5));
  events.close();
  await more;
  out.tablesAfterClose = (await tool('nft list tables')).stdout.split('\n').filter((l) => l.startsWith('table ip x')).length;
  nft.close();
}

/** IPVS: 2,000 services x 3 destinations. */
async function ipvsPart() {
  const ipvs = await Ipvs.open({ netns });
  const ops = [];
  for (let i = 0; i < 2_000; i++) {
    const service = { protocol: 'tcp', address: ip(0x0a6000 + i), port: 80, scheduler: 'rr' };
    ops.push({ op: 'addService', service });
    for (let d = 0; d < 3; d++) ops.push({ op: 'addDestination', service, destination: { address: ip(0x0af400 + i), port: 8080 + d } });
  }
  out.applied = (await whileReading(ipvs, () => ipvs.apply(ops))).filter((r) => r.ok).length;
  const dumped = await whileReading(ipvs, () => ipvs.dump());
  out.dumpedDestinations = dumped.reduce((n, s) => n + s.destinations.length, 0);
  const closing = ipvs.dump();
  ipvs.close();
  out.closedDump = await closing.then(
    () => 'completed',
    (e) => e.code,
  );
}

if (part === 'ipvs') await ipvsPart();
else await hostPart();
out.reads = reads;
console.log(JSON.stringify(out));
