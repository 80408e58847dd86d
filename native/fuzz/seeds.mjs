#!/usr/bin/env node
// native/fuzz/seeds.mjs — writes the fuzz seed corpora from bytes recorded
// from real kernels, so fuzzing starts from replies nobody here wrote:
//   test/fixtures/{ipvsadm,ipset,ipset-6.1,ipset-save,conntrack,conntrack-6.1,nft}/*.json  ("received"; nft's requests too)
//   native/fuzz/fixtures/rtnl/*.json  (recorded by record-rtnl.sh)
// and, for the entry parser, the element text of those cases; request
// records for ipvs_records come from the TypeScript RequestWriter (dist/,
// when built).
// Targets that run the real socket take a fake-kernel script (see
// fake_kernel.h): entries of [ctl u8, len u16le, datagram], where each
// message's nlmsg_seq says which request it answers (0: the latest sent,
// k: the k-th sent on the socket) and nlmsg_pid 0 stands for our port id.
// Output: native/fuzz/corpus/<target>/<name>, rewritten on every run (the
// content is a pure function of the fixtures). No dependencies.
import { readFileSync, writeFileSync, readdirSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const corpus = process.env.SEEDS_OUT || path.join(here, 'corpus'); // SEEDS_OUT: elsewhere, to look at

// Larger inputs make libFuzzer slow; a long dump is also seeded per datagram.
const MAX_SEED = 16 * 1024;
const NLMSG_ERROR = 2, NLMSG_DONE = 3, GENL_ID_CTRL = 0x10, NLM_F_DUMP = 0x300;
// <linux/ip_vs.h>: only what the batch seeds need to tell requests apart.
const IPVS_CMD_GET_SERVICE = 4, IPVS_CMD_GET_INFO = 15;

function fixtures(dir) {
	const d = path.join(root, dir);
	if (!existsSync(d)) return [];
	return readdirSync(d).filter((f) => f.endsWith('.json')).sort()
		.map((f) => ({ name: `${path.basename(dir)}-${f.slice(0, -5)}`, ...JSON.parse(readFileSync(path.join(d, f), 'utf8')) }));
}

// Sequence numbers and port ids differ per recording and mean nothing to a
// decoder: zero them so identical replies dedupe to one seed.
function normalized(hex) {
	const buf = Buffer.from(hex, 'hex');
	for (const [, m] of messages(buf)) m.fill(0, 8, 16);
	return buf;
}

// Netlink messages of a datagram: [type, bytes].
function messages(buf) {
	const out = [];
	for (let at = 0; at + 16 <= buf.length;) {
		const len = buf.readUInt32LE(at);
		if (len < 16 || at + len > buf.length) break;
		out.push([buf.readUInt16LE(at + 4), buf.subarray(at, at + len)]);
		at += (len + 3) & ~3;
	}
	return out;
}

const seeds = new Map(); // target -> Map(name -> Buffer)
function seed(target, name, bytes) {
	if (!bytes.length || bytes.length > MAX_SEED) return;
	if (!seeds.has(target)) seeds.set(target, new Map());
	const m = seeds.get(target);
	const hash = createHash('sha1').update(bytes).digest('hex').slice(0, 8);
	for (const b of m.values()) if (b.equals(bytes)) return; // same bytes, other case
	m.set(`${name}-${hash}`, Buffer.from(bytes));
}

// A fake-kernel script entry (fake_kernel.h).
function entry(bytes, ctl = 0) {
	const head = Buffer.alloc(3);
	head[0] = ctl;
	head.writeUInt16LE(bytes.length, 1);
	return Buffer.concat([head, bytes]);
}

// The datagrams of a case as a script in which every message answers the
// request sent latest (targets that ask one thing at a time); errors go to
// the error target too.
function latestScript(c) {
	const grams = (c.received || []).map(normalized);
	for (const m of grams.flatMap((g) => messages(g).filter(([t]) => t === NLMSG_ERROR).map(([, m]) => m)).slice(-3))
		seed('netlink_error', c.name, m);
	return Buffer.concat(grams.map((g) => entry(g)));
}

// The requests ipvsadm sent, with what our batch would send for each.
function sentRequests(c) {
	return (c.sent || []).map((hex) => {
		const b = Buffer.from(hex, 'hex');
		return { type: b.readUInt16LE(4), flags: b.readUInt16LE(6), key: b.subarray(8, 16).toString('hex'), cmd: b.length > 16 ? b[16] : 0 };
	});
}

// ipvsadm (libipvs) opens a socket per step, each looking the family up
// and asking GET_INFO; our batch asks the family once per socket and
// never GET_INFO. These are the requests it shares with ours.
function shared(sent) {
	return sent.map((s, i) => s.type === GENL_ID_CTRL ? i === sent.findIndex((x) => x.type === GENL_ID_CTRL) : s.cmd !== IPVS_CMD_GET_INFO);
}

// The recorded answers to the requests kept, each datagram with the
// 1-based position (among the kept requests) of the request it answers.
// Requests are told apart by sequence number and port id (each ipvsadm
// socket numbers from the same clock).
function answers(c, kept) {
	const sent = sentRequests(c);
	const position = new Map(); // seq+pid -> our 1-based position
	let n = 0;
	sent.forEach((s, i) => { if (kept[i]) position.set(s.key, ++n); });
	const out = [];
	for (const hex of c.received || []) {
		const g = Buffer.from(hex, 'hex');
		let pos;
		for (const [, m] of messages(g)) {
			const p = position.get(m.subarray(8, 16).toString('hex'));
			if (p !== undefined) pos = p;
			m.writeUInt32LE(p ?? 0, 8);
			m.writeUInt32LE(0, 12);
		}
		if (pos !== undefined) out.push({ pos, g });
	}
	return out;
}

// libnl stops reading once a get has its data; the kernel's ack that
// follows is not in the recording. A script closes with one (a real ack,
// for the latest request: it settles every earlier one, as the kernel's
// would).
function closingAck(c) {
	const ack = (c.received || []).map(normalized).flatMap((g) => messages(g))
		.find(([t, m]) => t === NLMSG_ERROR && m.length >= 20 && m.readInt32LE(16) === 0);
	return ack ? [entry(ack[1])] : [];
}

// A script in which each message names the request it answers by its
// position among the requests sent, as fake_kernel.h patches it.
function indexedScript(c, kept) {
	return Buffer.concat([...answers(c, kept).map(({ g }) => entry(g)), ...closingAck(c)]);
}

// A dump read twice: the first answer to request `pos` marked
// NLM_F_DUMP_INTR (the table changed meanwhile), then the same answer again
// for the dump the socket sends anew. Every message answers the latest
// request (seq 0): dumps go one at a time, and the re-sent dump shifts the
// positions of later requests.
function interruptedScript(c, kept, pos) {
	const all = answers(c, kept);
	const dump = all.filter((a) => a.pos === pos).map(({ g }) => Buffer.from(g));
	const first = dump.length && messages(dump[0]).find(([t]) => t > NLMSG_DONE);
	if (!first) return undefined;
	first[1].writeUInt16LE(first[1].readUInt16LE(6) | 0x10, 6); // NLM_F_DUMP_INTR
	const latest = (g) => { const b = Buffer.from(g); for (const [, m] of messages(b)) m.writeUInt32LE(0, 8); return b; };
	const out = [];
	let doubled = false;
	for (const a of all) {
		if (a.pos === pos) {
			if (doubled) continue;
			doubled = true;
			for (const g of dump) out.push(entry(latest(g)));
			for (const g of all.filter((x) => x.pos === pos)) out.push(entry(latest(g.g)));
			continue;
		}
		out.push(entry(latest(a.g)));
	}
	return Buffer.concat([...out, ...closingAck(c)]);
}

// ipvs_batch: [jobs, rcvbuf, sndbuf, restarts, count, templates...] + script
// (the header is described in ipvs_batch_fuzzer.cc; a template byte is the
// IPVS command, bit 5 IPv6, bit 6 a GET_SERVICE dump).
function batchSeed(name, jobs, rcvbuf, templates, script, restarts = 2) {
	if (!templates.length || templates.length > 12 || !script) return;
	const head = Buffer.from([jobs, rcvbuf, 12, restarts, templates.length - 1, ...templates]);
	seed('ipvs_batch', name, Buffer.concat([head, script]));
}

const ipvsadm = fixtures('test/fixtures/ipvsadm');
for (const c of ipvsadm) {
	const sent = sentRequests(c);
	const kept = shared(sent);
	const v6 = /ipv6|inet6|fd00|\[/.test(c.command || '') ? 0x20 : 0;
	// Execute: the batch sends what ipvsadm sent after its family lookup.
	const templates = sent.filter((s, i) => kept[i] && s.type !== GENL_ID_CTRL)
		.map((s) => s.cmd | v6 | (s.cmd === IPVS_CMD_GET_SERVICE && (s.flags & NLM_F_DUMP) === NLM_F_DUMP ? 0x40 : 0));
	const script = indexedScript(c, kept);
	batchSeed(c.name, 0, 13, templates, script);
	// The same with a 2 KiB receive buffer: one request per sendmsg.
	batchSeed(`${c.name}-small`, 0, 1, templates, script);
	// Dumps: our dump job does not ask GET_INFO first, as ipvsadm does.
	if (sent.some((s) => s.cmd === IPVS_CMD_GET_SERVICE && (s.flags & NLM_F_DUMP) === NLM_F_DUMP)) {
		batchSeed(`${c.name}-dump`, 1, 13, [0x44], script);
		// The service dump interrupted once: read again (1 restart allowed),
		// or given up with EINTR (none allowed).
		const pos = sent.filter((s, i) => kept[i]).findIndex((s) => s.cmd === IPVS_CMD_GET_SERVICE) + 1;
		const intr = interruptedScript(c, kept, pos);
		batchSeed(`${c.name}-dump-intr`, 1, 13, [0x44], intr, 1);
		batchSeed(`${c.name}-dump-intr-giveup`, 1, 13, [0x44], intr, 0);
	}
	// genl_family: the controller's answer, looked up twice.
	// (The reply and the ack that follows it: an error's echo starts at 20,
	// its type at 24.)
	const aboutCtrl = ([t, m]) => t === GENL_ID_CTRL || (t === NLMSG_ERROR && m.length >= 26 && m.readUInt16LE(24) === GENL_ID_CTRL);
	const ctrl = (c.received || []).map(normalized).filter((g) => messages(g).some(aboutCtrl)).slice(0, 2);
	if (ctrl.length) seed('genl_family', c.name, Buffer.concat([...ctrl, ...ctrl].map((g) => entry(g))));
	for (const h of c.received || [])
		for (const [type, m] of messages(normalized(h)))
			if (type > NLMSG_DONE && type !== GENL_ID_CTRL) seed('ipvs_message', c.name, m);
	for (const g of (c.received || []).map(normalized))
		for (const [t, m] of messages(g)) if (t === NLMSG_ERROR) seed('netlink_error', c.name, m);
}

// A module reload, from real replies: the first request fails with ENOENT
// (genetlink's answer to a stale family id), the lookup answers a new id,
// the request is sent again and acked.
{
	const c = ipvsadm.find((x) => x.name === 'ipvsadm-svc-add-tcp');
	if (c) {
		const grams = (c.received || []).map(normalized);
		const ctrl = grams.find((g) => messages(g).some(([t]) => t === GENL_ID_CTRL));
		const ack = grams.flatMap((g) => messages(g)).find(([t, m]) => t === NLMSG_ERROR && m.readInt32LE(16) === 0);
		if (ctrl && ack) {
			const enoent = Buffer.from(ack[1]);
			enoent.writeInt32LE(-2, 16);
			const moved = Buffer.from(ctrl);
			for (let at = 20; at + 6 <= moved.length;) { // CTRL_ATTR_FAMILY_ID (1), after the genl header
				const len = moved.readUInt16LE(at), type = moved.readUInt16LE(at + 2);
				if (len < 4) break;
				if ((type & 0x3fff) === 1) moved.writeUInt16LE(moved.readUInt16LE(at + 4) + 1, at + 4);
				at += (len + 3) & ~3;
			}
			enoent.writeUInt32LE(2, 8); // answers request 2 (the first after the lookup)
			const ack3 = Buffer.from(ack[1]);
			ack3.writeUInt32LE(4, 8); // the re-sent request: 1 lookup, 2 request, 3 lookup, 4 request
			const lookupAck = ack[1]; // seq 0: the latest request, the lookup
			batchSeed('reload-enoent', 0, 13, [1],
				Buffer.concat([entry(ctrl), entry(lookupAck), entry(enoent), entry(moved), entry(lookupAck), entry(ack3)]));
			seed('genl_family', 'reload-moved', Buffer.concat([entry(ctrl), entry(lookupAck), entry(moved), entry(lookupAck)]));
		}
	}
}

const ipset = [...fixtures('test/fixtures/ipset'), ...fixtures('test/fixtures/ipset-6.1'), ...fixtures('test/fixtures/ipset-save')];
for (const c of ipset) seed('ipset_reply', c.name, latestScript(c));
for (const c of fixtures('native/fuzz/fixtures/rtnl')) seed('rtnl_reply', c.name, latestScript(c));
for (const c of [...fixtures('test/fixtures/conntrack'), ...fixtures('test/fixtures/conntrack-6.1')])
	seed('conntrack_reply', c.name, latestScript(c));
// nftables_reply: nft's dump replies and its requests (both decode by the same schemas).
for (const c of fixtures('test/fixtures/nft')) {
	for (const hex of c.received) seed('nftables_reply', c.name, normalized(hex));
	for (const hex of c.sent) if (Buffer.from(hex, 'hex').readUInt16LE(4) >> 8 === 10) seed('nftables_reply', `${c.name}-sent`, normalized(hex));
}

// ipvs_records: request records as the TypeScript layer writes them, with
// their string tables; [0 (raw half), count, #strings, strings..., records]
// in the FuzzedDataProvider layout the target reads (integers from the
// end, strings and bytes from the front).
const built = await Promise.all([
	import(path.join(root, 'dist/lib/ipvs/request-writer.js')),
	import(path.join(root, 'dist/lib/ipvs/constants.js')),
]).catch((e) => {
	console.log(`seeds: ipvs_records: no TypeScript build (${e.code || e.message}); the target starts from nothing`);
	return undefined;
});
if (built) {
	const [{ RequestWriter }, { CMD }] = built;
	const cases = [
		(w) => { w.begin(CMD.NEW_SERVICE); w.serviceSpec({ protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr' }, 's'); },
		(w) => { w.begin(CMD.NEW_SERVICE); w.serviceSpec({ fwmark: 7, family: 'inet6', scheduler: 'sh', flags: { sched1: true }, persistent: { timeout: 300, netmask: 64 }, peName: 'sip' }, 's'); },
		(w) => { w.begin(CMD.NEW_DEST); const af = w.serviceKeyOnly({ protocol: 'udp', address: 'fd00::1', port: 53 }, 's'); w.destinationSpec({ address: 'fd00::2', port: 53, weight: 5, forward: 'tunnel', tunnel: { type: 'gue', port: 6080, flags: 'remcsum' } }, af, 'd'); },
		(w) => { w.begin(CMD.DEL_DEST); w.serviceKeyOnly({ protocol: 'sctp', address: '10.0.0.1', port: 9 }, 's'); w.destinationKey({ address: '10.0.0.2', port: 9 }, 'd'); },
		(w) => { w.begin(CMD.SET_CONFIG); w.timeouts({ tcp: 900, tcpFin: 120, udp: 300 }); },
		(w) => { w.begin(CMD.NEW_DAEMON); w.daemonConfig({ state: 'master', interface: 'eth0', syncId: 3, group: '224.0.0.81', port: 8848, ttl: 1, maxLen: 1472 }); },
	];
	for (const [i, write] of cases.entries()) {
		const w = new RequestWriter();
		write(w); // a seed the writer refuses is a broken seed: fail loudly
		const strings = w.strings();
		// FuzzedDataProvider: ConsumeRandomLengthString reads up to a
		// backslash not followed by another; integers come off the end.
		const front = Buffer.concat([...strings.map((s) => Buffer.from(`${s.replace(/\\/g, '\\\\')}\\n`)), Buffer.from(w.records())]);
		const back = Buffer.from([strings.length, w.count]); // read last-first: count, then #strings
		seed('ipvs_records', `writer${i}`, Buffer.concat([Buffer.from([0]), front, back]));
	}
}

// Entry parser seeds: [type index, flags, text...]; flags bit 0 = inet6,
// bits 1..4 = timeout/counters/comment/skbinfo supported. The type order is
// kTypes[] in native/ipset/set_types.cc (a mismatch only weakens seeds).
const TYPES = ['hash:ip', 'hash:ip,port', 'hash:ip,port,ip', 'hash:ip,port,net', 'hash:ip,mark', 'hash:ip,mac', 'hash:mac',
	'hash:net', 'hash:net,port', 'hash:net,iface', 'hash:net,net', 'hash:net,port,net', 'bitmap:ip', 'bitmap:ip,mac',
	'bitmap:port', 'list:set'];
function entrySeed(name, type, inet6, text) {
	const t = TYPES.indexOf(type);
	if (t < 0) return;
	seed('ipset_entry', name, Buffer.concat([Buffer.from([t, (inet6 ? 1 : 0) | 0x1e]), Buffer.from(text)]));
}
for (const c of ipset) {
	const lines = [...(c.setup || []), c.command || '', c.stdin || '']
		.join('\n').split(/\n|&&/).map((l) => l.trim().replace(/^ipset /, '').replace(/\\,/g, ',').replace(/ -exist /, ' '));
	const sets = new Map(); // name -> { type, inet6, entries }
	for (const l of lines) {
		const w = l.split(/\s+/);
		if (w[0] === 'create') sets.set(w[1], { type: w[2], inet6: /family inet6/.test(l), entries: [] });
		else if (w[0] === 'add' && sets.has(w[1])) sets.get(w[1]).entries.push(w.slice(2).join(' '));
	}
	// Per set: a few single entries and one multi-line seed (ParseEntries).
	for (const s of sets.values()) {
		s.entries.slice(0, 6).forEach((e) => entrySeed(c.name, s.type, s.inet6, e));
		if (s.entries.length > 1) entrySeed(c.name, s.type, s.inet6, s.entries.slice(0, 20).join('\n'));
	}
}
// Options and forms the recorded cases do not show.
const extra = [
	['hash:ip,port', false, '10.0.0.1,tcp:80-90 timeout 10 packets 5 bytes 700 comment "a b" skbmark 0x1/0xff skbprio 1:2 skbqueue 3'],
	['hash:ip,port', false, '10.0.0.1,icmp:ping\n10.0.0.2,http\n10.0.0.3-10.0.0.9,udp:53'],
	['hash:ip,port', true, 'fd00::1,icmpv6:echo-request\nfd00::2,gre:0'],
	['hash:net,iface', false, '10.0.0.0/8,physdev:eth+ nomatch'],
	['hash:ip,port,net', true, 'fd00::1,sctp:9,fd00:1::/64 nomatch timeout 1'],
	['bitmap:ip', false, '10.0.0.0/30\n10.0.0.7'],
	['bitmap:port', false, '1-1024 timeout 5'],
	['list:set', false, 'a timeout 3 comment "x"'],
	['list:set', false, 'a before b\nc after d timeout 1'],
	['hash:net,iface', true, '::/0,eth wildcard nomatch\n0/0,lo'],
	['hash:net,net', false, '10.0.0.0-10.0.1.5,10.2.0.0/16 nomatch packets 1'],
	['hash:net,port,net', true, 'fd00::/64,udp:53,fd01::1 skbmark 0x5'],
	['hash:ip,mark', false, '10.0.0.1,0x12\n10.0.0.2,4294967295'],
	['hash:ip,mac', true, 'fd00::1,0:1:2:a:b:c comment "m"'],
	['hash:mac', false, '00:11:22:AA:BB:CC timeout 0'],
	['bitmap:ip,mac', false, '10.0.0.1,00:11:22:aa:bb:cc\n10.0.0.2'],
];
extra.forEach(([type, inet6, text], i) => entrySeed(`extra${i}`, type, inet6, text));

for (const [target, m] of seeds) {
	const dir = path.join(corpus, target);
	rmSync(dir, { recursive: true, force: true });
	mkdirSync(dir, { recursive: true });
	for (const [name, bytes] of m) writeFileSync(path.join(dir, name), bytes);
	console.log(`seeds: ${target}: ${m.size}`);
}
