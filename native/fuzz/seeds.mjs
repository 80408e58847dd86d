#!/usr/bin/env node
// native/fuzz/seeds.mjs — writes the fuzz seed corpora from bytes recorded
// from real kernels, so fuzzing starts from replies nobody here wrote:
//   test/fixtures/{ipvsadm,ipset,ipset-6.1,ipset-save}/*.json  ("received")
//   native/fuzz/fixtures/rtnl/*.json  (recorded by record-rtnl.sh)
// and, for the entry parser, the element text of those cases.
// Output: native/fuzz/corpus/<target>/<name>, rewritten on every run (the
// content is a pure function of the fixtures). No dependencies.
import { readFileSync, writeFileSync, readdirSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const corpus = path.join(here, 'corpus');

// Larger inputs make libFuzzer slow; a long dump is also seeded per datagram.
const MAX_SEED = 16 * 1024;
const NLMSG_ERROR = 2, NLMSG_DONE = 3, GENL_ID_CTRL = 0x10;

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

// Every reply target gets whole cases (all datagrams concatenated: the
// split code walks them like one long datagram) and single datagrams;
// every NLMSG_ERROR goes to the error target.
function replySeeds(target, cases, keep = () => true) {
	for (const c of cases) {
		const grams = (c.received || []).map(normalized);
		const kept = grams.filter((g) => keep(messages(g)));
		seed(target, c.name, Buffer.concat(kept));
		// A few single datagrams too (a long dump's first ones suffice).
		if (kept.length > 1) kept.slice(0, 4).forEach((g, i) => seed(target, `${c.name}-d${i}`, g));
		// Errors: a few per case (acks of one case differ only in the echo).
		const errors = grams.flatMap((g) => messages(g).filter(([t]) => t === NLMSG_ERROR).map(([, m]) => m));
		for (const m of errors.slice(-3)) seed('netlink_error', c.name, m);
	}
}

const ipvsadm = fixtures('test/fixtures/ipvsadm');
// Controller (family lookup) replies are not IPVS messages; the handle
// never hands them to ipvs::Decode.
replySeeds('ipvs_datagram', ipvsadm, (ms) => !ms.some(([t]) => t === GENL_ID_CTRL));
for (const c of ipvsadm)
	for (const h of c.received || [])
		for (const [type, m] of messages(normalized(h)))
			if (type > NLMSG_DONE && type !== GENL_ID_CTRL) seed('ipvs_message', c.name, m);

const ipset = [...fixtures('test/fixtures/ipset'), ...fixtures('test/fixtures/ipset-6.1'), ...fixtures('test/fixtures/ipset-save')];
replySeeds('ipset_reply', ipset);
replySeeds('rtnl_reply', fixtures('native/fuzz/fixtures/rtnl'));

// Entry parser seeds: [type index, flags, text...]; flags bit 0 = inet6,
// bits 1..4 = timeout/counters/comment/skbinfo supported. The type order is
// kTypes[] in native/ipset/set_types.cc (a mismatch only weakens seeds).
const TYPES = ['hash:ip', 'hash:ip,port', 'hash:ip,port,ip', 'hash:ip,port,net', 'hash:net', 'hash:net,port',
	'hash:net,iface', 'bitmap:ip', 'bitmap:port', 'list:set'];
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
];
extra.forEach(([type, inet6, text], i) => entrySeed(`extra${i}`, type, inet6, text));

for (const [target, m] of seeds) {
	const dir = path.join(corpus, target);
	rmSync(dir, { recursive: true, force: true });
	mkdirSync(dir, { recursive: true });
	for (const [name, bytes] of m) writeFileSync(path.join(dir, name), bytes);
	console.log(`seeds: ${target}: ${m.size}`);
}
