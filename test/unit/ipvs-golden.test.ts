/**
 * The IPVS codec against bytes captured from ipvsadm 1.31 talking to a 6.1
 * kernel (test/fixtures/ipvsadm, made by scripts/capture-golden.sh): what
 * we encode must be what ipvsadm sends, and what the kernel answered
 * ipvsadm must decode to the state the capture set up.
 */
import t from 'tap';
import { CMD } from '../../lib/ipvs/constants.js';
import type { Destination, Service, ServiceKey, Stats } from '../../lib/ipvs/types.js';
import { GENL_ID_CTRL, type IpvsadmBlock, loadFixture, messages, parseIpvsadmList, splitHostPort, withoutSeqPid } from '../support/fixtures.js';
import { type Op, decode, destOp, dumpOp, encode as encodeOp, keyOp, serviceOp } from '../support/ipvs-codec.js';

const tcp80 = { protocol: 'tcp', address: '10.0.0.1', port: 80 } as const;

/** The request ipvsadm sent for its action: the last message to the IPVS family. */
function actionMessage(name: string, cmd: number): Buffer {
  const sent = messages(loadFixture('ipvsadm', name).sent).filter((m) => m.type !== GENL_ID_CTRL && m.bytes[16] === cmd);
  if (sent.length === 0) throw new Error(`${name}: no IPVS command ${cmd} in the capture`);
  return sent[sent.length - 1].bytes;
}

function encode(op: Op, like: Buffer): Buffer {
  return encodeOp(op, like.readUInt16LE(4));
}

// Whole-message equality: service and destination commands built from the
// public API must produce ipvsadm's bytes exactly (seq and port id aside).
const exact: Array<[string, Op]> = [
  ['svc-add-tcp', serviceOp(CMD.NEW_SERVICE, { ...tcp80, scheduler: 'rr' })],
  ['svc-add-udp', serviceOp(CMD.NEW_SERVICE, { protocol: 'udp', address: '10.0.0.1', port: 53, scheduler: 'wlc' })],
  ['svc-add-sctp', serviceOp(CMD.NEW_SERVICE, { protocol: 'sctp', address: '10.0.0.1', port: 3868, scheduler: 'rr' })],
  ['svc-add-fwmark', serviceOp(CMD.NEW_SERVICE, { fwmark: 42, family: 'inet', scheduler: 'rr' })],
  ['svc-add-fwmark-ipv6', serviceOp(CMD.NEW_SERVICE, { fwmark: 43, family: 'inet6', scheduler: 'rr' })],
  ['svc-add-ipv6-sh-flags', serviceOp(CMD.NEW_SERVICE, { protocol: 'tcp', address: 'fd00::1', port: 443, scheduler: 'sh', flags: { sched1: true, sched2: true } })],
  ['svc-add-mh', serviceOp(CMD.NEW_SERVICE, { ...tcp80, scheduler: 'mh', flags: { sched1: true, sched2: true } })],
  ['svc-add-one-packet', serviceOp(CMD.NEW_SERVICE, { protocol: 'udp', address: '10.0.0.1', port: 53, scheduler: 'rr', flags: { onePacket: true } })],
  ['svc-add-persistent', serviceOp(CMD.NEW_SERVICE, { ...tcp80, scheduler: 'rr', persistent: { timeout: 300, netmask: '255.255.255.0' } })],
  ['svc-add-persistent-ipv6', serviceOp(CMD.NEW_SERVICE, { protocol: 'tcp', address: 'fd00::1', port: 80, scheduler: 'rr', persistent: { timeout: 60, netmask: 64 } })],
  ['svc-add-pe-sip', serviceOp(CMD.NEW_SERVICE, { protocol: 'udp', address: '10.0.0.1', port: 5060, scheduler: 'rr', persistent: { timeout: 60 }, peName: 'sip' })],
  ['svc-edit', serviceOp(CMD.SET_SERVICE, { ...tcp80, scheduler: 'wrr' })],
  ['timeout-set', { cmd: CMD.SET_CONFIG, write: (w) => void (w.begin(CMD.SET_CONFIG), w.timeouts({ tcp: 900, tcpFin: 120, udp: 300 })) }],
  ['daemon-start', { cmd: CMD.NEW_DAEMON, write: (w) => void (w.begin(CMD.NEW_DAEMON), w.daemonConfig({ state: 'master', interface: 'lo', syncId: 5 })) }],
  ['daemon-stop', { cmd: CMD.DEL_DAEMON, write: (w) => void (w.begin(CMD.DEL_DAEMON), w.daemonStop('master')) }],
  ['clear', keyOp(CMD.FLUSH, undefined)],
  ['zero-all', keyOp(CMD.ZERO, undefined)],
  ['timeout-get', keyOp(CMD.GET_CONFIG, undefined)],
];

t.test('requests are byte for byte what ipvsadm sends', async (t) => {
  for (const [name, op] of exact) {
    const theirs = actionMessage(name, op.cmd);
    t.same(withoutSeqPid(encode(op, theirs)).toString('hex'), withoutSeqPid(theirs).toString('hex'), name);
  }
});

// For destination, delete and zero commands ipvsadm also sends the service's
// scheduler, flags, timeout and netmask, which the kernel ignores there (it
// parses only the identity). We send the identity alone: it must equal the
// identity ipvsadm sends, and everything after the service nest must match.
function splitServiceNest(msg: Buffer): { nest: Buffer; rest: Buffer; head: Buffer } {
  const head = msg.subarray(0, 20);
  const nestLen = msg.readUInt16LE(20);
  const nestEnd = 20 + ((nestLen + 3) & ~3);
  return { head, nest: msg.subarray(24, 20 + nestLen), rest: msg.subarray(nestEnd) };
}

const dest = destOp;

const identity: Array<[string, Op]> = [
  ['dest-add-masq', dest(CMD.NEW_DEST, tcp80, { address: '10.0.1.2', port: 8080, weight: 3 })],
  ['dest-add-route', dest(CMD.NEW_DEST, tcp80, { address: '10.0.1.2', port: 80, forward: 'route' })],
  ['dest-add-tunnel', dest(CMD.NEW_DEST, tcp80, { address: '10.0.1.2', port: 80, forward: 'tunnel' })],
  ['dest-add-tun-gue', dest(CMD.NEW_DEST, tcp80, { address: '10.0.1.2', port: 80, forward: 'tunnel', tunnel: { type: 'gue', port: 6080 } })],
  ['dest-add-tun-gue-remcsum', dest(CMD.NEW_DEST, tcp80, { address: '10.0.1.2', port: 80, forward: 'tunnel', tunnel: { type: 'gue', port: 6080, flags: 'remcsum' } })],
  ['dest-add-tun-gre', dest(CMD.NEW_DEST, tcp80, { address: '10.0.1.2', port: 80, forward: 'tunnel', tunnel: { type: 'gre', flags: 'nocsum' } })],
  ['dest-add-thresholds', dest(CMD.NEW_DEST, tcp80, { address: '10.0.1.2', port: 8080, upperThreshold: 100, lowerThreshold: 10 })],
  ['dest-add-ipv6', dest(CMD.NEW_DEST, { protocol: 'tcp', address: 'fd00::1', port: 443 }, { address: 'fd00:1::2', port: 8443, weight: 2 })],
  ['dest-add-fwmark', dest(CMD.NEW_DEST, { fwmark: 42, family: 'inet' }, { address: '10.0.1.2', port: 0, forward: 'route' })],
  ['dest-edit', dest(CMD.SET_DEST, tcp80, { address: '10.0.1.2', port: 8080, weight: 5 })],
  ['svc-del', keyOp(CMD.DEL_SERVICE, tcp80)],
  ['zero-service', keyOp(CMD.ZERO, tcp80)],
];

t.test('service identity and destination match ipvsadm', async (t) => {
  for (const [name, op] of identity) {
    const theirs = splitServiceNest(withoutSeqPid(actionMessage(name, op.cmd)));
    const ours = splitServiceNest(withoutSeqPid(encode(op, actionMessage(name, op.cmd))));
    t.same(ours.head.subarray(4).toString('hex'), theirs.head.subarray(4).toString('hex'), `${name}: header`);
    t.same(ours.nest.toString('hex'), theirs.nest.subarray(0, ours.nest.length).toString('hex'), `${name}: service identity`);
    t.ok(ours.nest.length > 8, `${name}: identity is not empty`);
    if (op.cmd !== CMD.DEL_DEST) t.same(ours.rest.toString('hex'), theirs.rest.toString('hex'), `${name}: the rest`);
  }
});

t.test('destination delete sends address and port as ipvsadm does', async (t) => {
  const op = dest(CMD.DEL_DEST, tcp80, { address: '10.0.1.2', port: 8080 }, true);
  const theirs = splitServiceNest(withoutSeqPid(actionMessage('dest-del', op.cmd)));
  const ours = splitServiceNest(withoutSeqPid(encode(op, actionMessage('dest-del', op.cmd))));
  // ipvsadm's destination nest starts with family, address and port; ours
  // carries exactly those.
  t.same(ours.rest.subarray(4).toString('hex'), theirs.rest.subarray(4, ours.rest.length).toString('hex'));
});

t.test('dump requests match ipvsadm -Ln', async (t) => {
  const sent = messages(loadFixture('ipvsadm', 'list-2svc-2dest').sent).filter((m) => m.type !== GENL_ID_CTRL);
  const svcDump = sent.find((m) => m.bytes[16] === CMD.GET_SERVICE)!;
  t.same(withoutSeqPid(encode(dumpOp(CMD.GET_SERVICE), svcDump.bytes)).toString('hex'), withoutSeqPid(svcDump.bytes).toString('hex'));
  const destDumps = sent.filter((m) => m.bytes[16] === CMD.GET_DEST);
  t.equal(destDumps.length, 2);
  const keys = [tcp80, { protocol: 'udp', address: '10.0.0.2', port: 53 }];
  destDumps.forEach((m, i) => {
    const op = dumpOp(CMD.GET_DEST, keys[i]);
    t.same(withoutSeqPid(encode(op, m.bytes)).toString('hex'), withoutSeqPid(m.bytes).toString('hex'), `GET_DEST ${i}`);
  });
});

/** Decodes every IPVS message the kernel sent in a capture. */
function decoded(name: string, defaultAf = 2) {
  return messages(loadFixture('ipvsadm', name).received)
    .filter((m) => m.type !== GENL_ID_CTRL && m.type >= 0x10)
    .map((m) => decode(m.bytes, defaultAf));
}

t.test('replies to ipvsadm -Ln decode to the state that was set up', async (t) => {
  const all = decoded('list-2svc-2dest');
  // The kernel dumps in hash order.
  const services = all.flatMap((r) => r.services).sort((a, b) => ('port' in a && 'port' in b ? a.port - b.port : 0));
  const dests = all.flatMap((r) => r.destinations).sort((a, b) => a.address.localeCompare(b.address));
  t.match(services, [
    { protocol: 'udp', address: '10.0.0.2', port: 53, family: 'inet', scheduler: 'wlc' },
    { protocol: 'tcp', address: '10.0.0.1', port: 80, family: 'inet', scheduler: 'rr', flags: { onePacket: false } },
  ]);
  t.notOk('persistent' in services[0], 'not persistent');
  t.match(dests, [
    { address: '10.0.1.2', port: 80, forward: 'masq', weight: 1 },
    { address: '10.0.1.3', port: 80, forward: 'masq', weight: 2 },
    { address: '10.0.1.4', port: 53, forward: 'route', weight: 1 },
    { address: '10.0.1.5', port: 53, forward: 'tunnel', weight: 1, upperThreshold: 10, lowerThreshold: 5, tunnel: { type: 'ipip' } },
  ]);
  t.equal(typeof services[0].stats.conns, 'bigint');
});

// The listings ipvsadm printed from the same replies (fixtures keep its
// stdout): each request ipvsadm sent is paired with the replies that
// answered it, in order (ipvsadm opens a socket per request, so sequence
// numbers repeat); its GET_DEST dumps name their service.
interface Listed {
  services: Service[];
  /** Each GET_DEST dump: the service it asked about and what came back. */
  destinations: Array<{ service: ServiceKey; destinations: Destination[] }>;
  blocks: IpvsadmBlock[];
}
const NLMSG_DONE = 3;
const NLM_F_DUMP = 0x300;

function listed(name: string): Listed {
  const fx = loadFixture('ipvsadm', name);
  const ipvs = (m: { type: number }) => m.type !== GENL_ID_CTRL && m.type >= 0x10;
  const sent = messages(fx.sent).filter(ipvs);
  const rx = messages(fx.received).filter((m) => m.type === NLMSG_DONE || ipvs(m));
  let at = 0;
  const out: Listed = { services: [], destinations: [], blocks: parseIpvsadmList(fx.stdout ?? '') };
  for (const req of sent) {
    // A request decodes like a reply: the service it names, its identity only.
    const request = decode(req.bytes, 2);
    const replies = [];
    if ((req.flags & NLM_F_DUMP) === NLM_F_DUMP) {
      while (rx[at].type !== NLMSG_DONE) replies.push(rx[at++]);
      at++;
    } else replies.push(rx[at++]);
    const asked = request.services[0];
    const decoded = replies.map((m) => decode(m.bytes, asked?.family === 'inet6' ? 10 : 2));
    if (request.cmd === CMD.GET_SERVICE) out.services.push(...decoded.flatMap((d) => d.services));
    if (request.cmd === CMD.GET_DEST) {
      const key = asked!;
      out.destinations.push({
        service: 'fwmark' in key ? { fwmark: key.fwmark, family: key.family } : { protocol: key.protocol, address: key.address, port: key.port },
        destinations: decoded.flatMap((d) => d.destinations),
      });
    }
  }
  t.equal(at, rx.length, `${name}: every reply belongs to a request`);
  return out;
}

/** The service a listing line names: "TCP 10.0.0.1:80 ...", "FWM 42 IPv6 ...". */
function keyOf(words: string[]): ServiceKey {
  if (words[0] === 'FWM') return { fwmark: Number(words[1]), family: words[2] === 'IPv6' ? 'inet6' : 'inet' };
  return { protocol: words[0].toLowerCase() as 'tcp' | 'udp' | 'sctp', ...splitHostPort(words[1]) };
}
const sameKey = (a: ServiceKey, b: ServiceKey) => JSON.stringify(a) === JSON.stringify(b);

/** Each printed service with what we decoded for it and its destinations, in ipvsadm's order. */
function pairs(l: Listed) {
  t.equal(l.blocks.length, l.services.length, 'as many services as ipvsadm printed');
  return l.blocks.map((b) => {
    const key = keyOf(b.service);
    const service = l.services.find((s) => sameKey(keyOf(serviceWords(s)), key));
    const dests = l.destinations.find((d) => sameKey(d.service, key))?.destinations ?? [];
    if (!service) throw new Error(`no decoded service for ${b.service.join(' ')}`);
    t.equal(dests.length, b.destinations.length, `${b.service.slice(0, 2).join(' ')}: as many destinations as ipvsadm printed`);
    // ipvsadm prints destinations sorted by address and port.
    const printed = b.destinations.map((w) => ({ words: w, dest: dests.find((d) => hostPort(d) === w[0]) }));
    for (const p of printed) if (!p.dest) throw new Error(`no decoded destination for ${p.words.join(' ')}`);
    return { words: b.service, service, destinations: printed as Array<{ words: string[]; dest: Destination }> };
  });
}

function hostPort(d: { address: string; port: number }): string {
  return d.address.includes(':') ? `[${d.address}]:${d.port}` : `${d.address}:${d.port}`;
}

/** A decoded service's identity in ipvsadm's words. */
function serviceWords(s: Service): string[] {
  if ('fwmark' in s) return ['FWM', String(s.fwmark), ...(s.family === 'inet6' ? ['IPv6'] : [])];
  return [s.protocol.toUpperCase(), hostPort(s)];
}

/** "rr persistent 60 mask 64 ops ..." as ipvsadm prints a service's scheduler and flags. */
function schedulerWords(s: Service): string[] {
  const w = [s.scheduler];
  if (s.persistent) {
    w.push('persistent', String(s.persistent.timeout));
    const full = s.family === 'inet6' ? 128 : '255.255.255.255';
    if (s.persistent.netmask !== full) w.push('mask', String(s.persistent.netmask));
  }
  if (s.flags.onePacket) w.push('ops');
  return w;
}

const FORWARD_WORD: Record<string, string> = { masq: 'Masq', local: 'Local', tunnel: 'Tunnel', route: 'Route' };

t.test('IPv6 and fwmark: every field ipvsadm -Ln printed', async (t) => {
  const l = listed('list-fwmark-ipv6');
  t.same(l.blocks.map((b) => b.service.join(' ')), ['TCP [fd00::1]:443 rr persistent 60', 'FWM 42 rr'], 'the capture is the one set up');
  for (const p of pairs(l)) {
    t.same([...serviceWords(p.service), ...schedulerWords(p.service)], p.words, p.words.join(' '));
    for (const { words, dest } of p.destinations)
      t.same([hostPort(dest), FORWARD_WORD[dest.forward], String(dest.weight), String(dest.activeConns), String(dest.inactiveConns)], words, words.join(' '));
  }
  const [v6, fw] = pairs(l).map((p) => p.service);
  t.match(v6, { protocol: 'tcp', address: 'fd00::1', port: 443, family: 'inet6', scheduler: 'rr', persistent: { timeout: 60, netmask: 128 }, flags: { onePacket: false, sched1: false, sched2: false, sched3: false } });
  t.match(fw, { fwmark: 42, family: 'inet', scheduler: 'rr' });
  t.notOk('persistent' in fw);
  const dests = l.destinations.flatMap((d) => d.destinations);
  t.match(dests.find((d) => d.family === 'inet6'), { address: 'fd00:1::2', port: 443, forward: 'masq', weight: 1 });
  t.match(dests.find((d) => d.family === 'inet'), { address: '10.0.1.2', port: 0, forward: 'route', weight: 1 });
});

/** The five numbers of a `--stats --exact` / `--rate` line. */
const statWords = (s: Stats, which: 'stats' | 'rate') =>
  (which === 'stats' ? [s.conns, s.inPackets, s.outPackets, s.inBytes, s.outBytes] : [s.cps, s.inPps, s.outPps, s.inBps, s.outBps]).map(String);

for (const [name, which] of [['list-stats-exact', 'stats'], ['list-rate', 'rate']] as const) {
  t.test(`${name}: every counter equals what ipvsadm printed, services and destinations`, async (t) => {
    const ps = pairs(listed(name));
    let nonZero = 0;
    for (const p of ps) {
      t.same([...serviceWords(p.service), ...statWords(p.service.stats, which)], p.words, p.words.join(' '));
      for (const { words, dest } of p.destinations) t.same([hostPort(dest), ...statWords(dest.stats, which)], words, words.join(' '));
      nonZero += statWords(p.service.stats, which).filter((w) => w !== '0').length;
    }
    t.ok(nonZero > 0, `the capture had traffic: ${nonZero} non-zero service counters`);
    for (const p of ps) t.equal(typeof p.service.stats.conns, 'bigint');
  });
}

t.test('list-persistent-conn: weight, persistent, active and inactive connections', async (t) => {
  const ps = pairs(listed('list-persistent-conn'));
  for (const p of ps) {
    t.same([...serviceWords(p.service), ...schedulerWords(p.service)], p.words, p.words.join(' '));
    for (const { words, dest } of p.destinations)
      t.same([hostPort(dest), String(dest.weight), String(dest.persistentConns), String(dest.activeConns), String(dest.inactiveConns)], words, words.join(' '));
  }
  t.ok(ps.some((p) => p.destinations.some((d) => d.dest.persistentConns > 0)), 'a persistence template was counted');
});

t.test('list-tun-info: the tunnel of a GUE destination', async (t) => {
  const [p] = pairs(listed('list-tun-info'));
  const [{ words, dest }] = p.destinations;
  t.same(words, ['10.0.1.2:80', 'Tunnel', 'gue:6080:-c', '1', '0', '0'], 'what ipvsadm printed');
  t.match(dest, { address: '10.0.1.2', port: 80, forward: 'tunnel', weight: 1, activeConns: 0, inactiveConns: 0, tunnel: { type: 'gue', port: 6080, flags: 'nocsum' } });
  t.same([hostPort(dest), FORWARD_WORD[dest.forward], `${dest.tunnel!.type}:${dest.tunnel!.port}:${dest.tunnel!.flags === 'nocsum' ? '-c' : '?'}`, String(dest.weight), String(dest.activeConns), String(dest.inactiveConns)], words);
});

t.test('list-one-service: a single GET_SERVICE and its destinations', async (t) => {
  const l = listed('list-one-service');
  t.equal(l.services.length, 1);
  const [p] = pairs(l);
  t.same([...serviceWords(p.service), ...schedulerWords(p.service)], ['TCP', '10.0.0.1:80', 'rr']);
  t.same(p.destinations.map(({ dest }) => [hostPort(dest), FORWARD_WORD[dest.forward], String(dest.weight), String(dest.activeConns), String(dest.inactiveConns)]), p.destinations.map((d) => d.words));
});

t.test('info, timeouts and daemons decode', async (t) => {
  const info = decoded('list-empty').find((r) => r.info);
  t.match(info?.info, { version: '1.2.1', connTableSize: 4096 });
  const to = decoded('timeout-get').find((r) => r.timeouts);
  t.same(to?.timeouts, { tcp: 900, tcpFin: 120, udp: 300 });
  const daemons = decoded('daemon-list').flatMap((r) => r.daemons);
  t.match(daemons, [{ state: 'master', interface: 'lo', syncId: 5 }]);
});

t.test('malformed replies are refused, never read past their end', async (t) => {
  const good = messages(loadFixture('ipvsadm', 'list-2svc-2dest').received).find((m) => m.type !== GENL_ID_CTRL && m.type >= 0x10 && m.bytes[16] === 1)!.bytes;
  for (let cut = 20; cut < good.length; cut += 7) {
    const b = Buffer.from(good.subarray(0, cut));
    b.writeUInt32LE(cut, 0);
    try {
      decode(b);
    } catch (e) {
      t.match((e as Error).message, /malformed IPVS message/);
    }
  }
  t.throws(() => decode(Buffer.alloc(8)), /malformed/);
});
