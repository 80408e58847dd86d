#!/usr/bin/env node
// scripts/sandbox/strace-netlink.mjs — turn an strace log into a golden-bytes
// fixture (JSON). No dependencies.
//
// The log must come from
//   strace -f -xx -s 65535 -e trace=socket,sendmsg,sendto,recvmsg,recvfrom \
//          -e read=all -e write=all -o LOG TOOL ...
// strace decodes netlink messages symbolically in the syscall line, so the
// bytes are taken from the "-e read/write" hex dumps (" | 00000  1c 00 ... |")
// that follow each syscall; those are the exact bytes sent / received.
//
// Rules:
//  - only fds returned by socket(AF_NETLINK, ...) are considered (if no
//    socket() call is in the log, every fd is);
//  - failed calls (= -1) are skipped;
//  - recvmsg/recvfrom with MSG_PEEK are skipped (libnl peeks each datagram with
//    MSG_PEEK|MSG_TRUNC to size its buffer, then reads it again): "received"
//    holds each datagram once, whole, in order;
//  - each sent datagram is split into its netlink messages (nlmsg_len, 4-byte
//    aligned) when the lengths tile it exactly, else kept whole; "sent_split"
//    records how many messages each datagram held.
//
// usage: strace-netlink.mjs --trace LOG --out FILE.json --command STR
//        [--tool STR] [--kernel STR] [--setup STR]... [--stdin FILE]
//        [--exit-status N]
import { readFileSync, writeFileSync, mkdirSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { dirname } from 'node:path';

function parseArgs(argv) {
	const o = { setup: [] };
	for (let i = 0; i < argv.length; i++) {
		const k = argv[i];
		const v = argv[++i];
		if (v === undefined) throw new Error(`missing value for ${k}`);
		switch (k) {
			case '--trace': o.trace = v; break;
			case '--out': o.out = v; break;
			case '--command': o.command = v; break;
			case '--tool': o.tool = v; break;
			case '--kernel': o.kernel = v; break;
			case '--setup': o.setup.push(v); break;
			case '--stdin': o.stdin = v; break;
			case '--exit-status': o.exitStatus = Number(v); break;
			default: throw new Error(`unknown option ${k}`);
		}
	}
	if (!o.trace || !o.out || !o.command) throw new Error('need --trace, --out, --command');
	return o;
}

const SYSCALL_RE = /^(?:\[pid\s+)?(\d+)?\]?\s*(socket|sendmsg|sendto|recvmsg|recvfrom)\((.*)$/;
const RESUMED_RE = /^(?:\[pid\s+)?(\d+)?\]?\s*<\.\.\. (socket|sendmsg|sendto|recvmsg|recvfrom) resumed>(.*)$/;
// " | 00000  1c 00 00 00 01 06 01 00  5f 6f 02 6b 00 00 00 00  ........_o.k.... |"
// hex columns are 10..58 (16 bytes, extra space after the 8th); then ASCII.
const DUMP_RE = /^ \| [0-9a-f]{5,}  /;

export function parseTrace(text) {
	const lines = text.split('\n');
	const calls = [];
	const pending = new Map(); // pid -> {name, args}
	let cur = null;
	for (const line of lines) {
		const d = DUMP_RE.exec(line);
		if (d) {
			if (cur) cur.hex += (line.slice(d[0].length, d[0].length + 49).match(/[0-9a-f]{2}/g) || []).join('');
			continue;
		}
		if (/^ \* \d+ bytes in buffer/.test(line)) continue;
		let m = RESUMED_RE.exec(line);
		let name, rest, pid;
		if (m) {
			pid = m[1] || '0';
			name = m[2];
			const p = pending.get(pid);
			rest = (p ? p.rest : '') + m[3];
			pending.delete(pid);
		} else if ((m = SYSCALL_RE.exec(line))) {
			pid = m[1] || '0';
			name = m[2];
			rest = m[3];
			if (/<unfinished \.\.\.>\s*$/.test(rest)) {
				pending.set(pid, { rest: rest.replace(/<unfinished \.\.\.>\s*$/, '') });
				cur = null;
				continue;
			}
		} else {
			cur = null;
			continue;
		}
		const r = /\)\s+=\s+(-?\d+)(?:\s.*)?$/.exec(rest);
		cur = { pid, name, args: rest, ret: r ? Number(r[1]) : NaN, hex: '' };
		calls.push(cur);
	}
	return calls;
}

function splitNetlink(hex) {
	const buf = Buffer.from(hex, 'hex');
	const out = [];
	let off = 0;
	while (off + 16 <= buf.length) {
		const len = buf.readUInt32LE(off);
		if (len < 16 || off + len > buf.length) return [hex];
		out.push(buf.subarray(off, off + len).toString('hex'));
		off += (len + 3) & ~3;
	}
	return off === buf.length ? out : [hex];
}

export function extract(calls) {
	const nlFds = new Set();
	let sawSocket = false;
	for (const c of calls) {
		if (c.name === 'socket') {
			sawSocket = true;
			if (/^AF_NETLINK\b/.test(c.args) && c.ret >= 0) nlFds.add(c.ret);
		}
	}
	const fdOf = (c) => Number(/^(\d+)/.exec(c.args)?.[1]);
	const sent = [], sentSplit = [], received = [];
	const syscalls = { send: new Set(), recv: new Set() };
	let peeks = 0;
	for (const c of calls) {
		if (c.name === 'socket' || !(c.ret >= 0)) continue;
		// fd numbers only (fds are reused after close; the tools are single-process)
		if (sawSocket && !nlFds.has(fdOf(c))) continue;
		if (c.name === 'sendmsg' || c.name === 'sendto') {
			syscalls.send.add(c.name);
			const msgs = splitNetlink(c.hex);
			sent.push(...msgs);
			sentSplit.push(msgs.length);
		} else {
			// flags are the last argument of recvmsg, the 4th of recvfrom
			if (/MSG_PEEK/.test(c.args.replace(/"(?:[^"\\]|\\.)*"/g, ''))) { peeks++; continue; }
			syscalls.recv.add(c.name);
			received.push(c.hex);
		}
	}
	return { sent, sentSplit, received, peeks, syscalls: { send: [...syscalls.send], recv: [...syscalls.recv] } };
}

function main() {
	const o = parseArgs(process.argv.slice(2));
	const { sent, sentSplit, received, peeks, syscalls } = extract(parseTrace(readFileSync(o.trace, 'utf8')));
	if (sent.length === 0) throw new Error(`${o.trace}: no netlink traffic found`);
	const fx = {
		command: o.command,
		tool: o.tool ?? null,
		kernel: o.kernel ?? null,
		made_by: 'scripts/capture-golden.sh',
	};
	if (o.setup.length) fx.setup = o.setup;
	if (o.stdin) fx.stdin = readFileSync(o.stdin, 'utf8');
	if (o.exitStatus !== undefined) fx.exit_status = o.exitStatus;
	fx.syscalls = syscalls;
	fx.peeks_skipped = peeks;
	fx.sent_split = sentSplit;
	fx.sent = sent;
	fx.received = received;
	mkdirSync(dirname(o.out), { recursive: true });
	writeFileSync(o.out, JSON.stringify(fx, null, 1) + '\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
	try {
		main();
	} catch (e) {
		console.error(`strace-netlink: ${e.message}`);
		process.exit(1);
	}
}
