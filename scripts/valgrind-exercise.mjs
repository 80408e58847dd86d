// scripts/valgrind-exercise.mjs — every native path of the addon against a
// real kernel, small enough to run under valgrind in the user-mode-linux
// sandbox (scripts/valgrind-kernel.sh runs it there). ASan and LSan cannot
// start in that guest (see scripts/asan-test.sh); valgrind's memcheck keeps
// its own shadow and runs, at ~50x the time, so this is a script of modest
// size rather than the test suite. It asserts what it relies on, so a
// broken path fails here rather than passing unexercised.
//
// Run it in a network namespace of its own: it flushes IPVS and destroys
// the ipset sets it made.
import assert from 'node:assert/strict';
import { Ipset, Ipvs, Rtnl } from '../dist/lib/index.js';

const rounds = Number(process.env.VALGRIND_ROUNDS || 3);

async function ipvs() {
	const v = await Ipvs.open();
	try {
		await v.flush();
		assert.ok((await v.info()).version, 'info: a version');
		const svc = (i) => ({ protocol: 'tcp', address: `10.0.0.${i}`, port: 80 });
		const ops = [];
		for (let i = 1; i <= 4; i++) ops.push({ op: 'addService', service: { ...svc(i), scheduler: 'rr' } });
		ops.push({ op: 'addService', service: { ...svc(1), scheduler: 'rr' } }); // exists: fails alone
		for (let i = 1; i <= 4; i++)
			for (let d = 1; d <= 3; d++)
				ops.push({ op: 'addDestination', service: svc(i), destination: { address: `10.1.${i}.${d}`, port: 8080, weight: d } });
		ops.push({ op: 'deleteDestination', service: svc(1), destination: { address: '10.9.9.9', port: 1 } }); // missing
		ops.push({ op: 'addService', service: { protocol: 'udp', address: 'fd00::1', port: 53, scheduler: 'sh', flags: { sched1: true } } });
		ops.push({ op: 'addService', service: { fwmark: 7, family: 'inet', scheduler: 'wlc', persistent: { timeout: 60 } } });
		const results = await v.apply(ops);
		const failed = results.flatMap((r, i) => (r.ok ? [] : [`${i}: ${r.error.message}`]));
		assert.equal(failed.length, 2, `exactly the duplicate and the missing destination fail, not: ${failed.join('; ')}`);
		const dump = await v.dump();
		assert.equal(dump.length, 6, 'dump: every service');
		assert.equal(dump.reduce((n, s) => n + s.destinations.length, 0), 12, 'dump: every destination');
		assert.equal((await v.listServices()).length, 6);
		assert.equal((await v.listDestinations(svc(2))).length, 3);
		assert.ok(await v.getService(svc(3)));
		assert.equal(await v.getService(svc(9)), undefined);
		await v.updateDestination(svc(2), { address: '10.1.2.1', port: 8080, weight: 0 });
		await v.deleteService(svc(4));
		await assert.rejects(v.deleteService(svc(4)), 'a second delete fails');
		await v.setTimeouts({ tcp: 900, tcpFin: 120, udp: 300 });
		assert.equal((await v.getTimeouts()).tcp, 900);
		await v.listDaemons();
		await v.zero();
		await assert.rejects(v.apply([{ op: 'addService', service: { protocol: 'tcp', address: 'nope', port: 80 } }]), TypeError);
		await v.flush();
	} finally {
		v.close();
	}
}

// A batch larger than one sendmsg and a dump of many parts.
async function ipvsBulk() {
	const v = await Ipvs.open();
	try {
		const ops = [];
		for (let i = 0; i < 300; i++) {
			const service = { protocol: 'udp', address: `10.7.${i >> 8}.${i & 255}`, port: 5000 };
			ops.push({ op: 'addService', service: { ...service, scheduler: 'wrr' } });
			ops.push({ op: 'addDestination', service, destination: { address: `10.8.${i >> 8}.${i & 255}`, port: 5001 } });
		}
		assert.ok((await v.apply(ops)).every((r) => r.ok), 'a bulk batch applies whole');
		assert.equal((await v.dump()).length, 300);
		await v.flush();
	} finally {
		v.close();
	}
}

async function ipset() {
	const s = await Ipset.open();
	try {
		await s.create('vg-ip', 'hash:ip', { timeout: 0, counters: true, comment: true });
		await s.create('vg-net', 'hash:net,port');
		assert.equal(await s.addMany('vg-ip', Array.from({ length: 50 }, (_, i) => `10.2.0.${i}`)), 50);
		await s.add('vg-ip', '10.3.0.1');
		await assert.rejects(s.add('vg-ip', '10.3.0.1'), 'a duplicate add fails');
		await s.add('vg-net', '10.4.0.0/16,tcp:80');
		assert.ok(await s.test('vg-ip', '10.2.0.7'));
		assert.equal((await s.list('vg-ip')).entries.length, 51);
		await s.header('vg-net');
		assert.ok((await s.listNames()).includes('vg-net'));
		await s.replace('vg-net', ['10.5.0.0/24,udp:53']);
		await s.destroy('vg-ip');
		await s.destroy('vg-net');
	} finally {
		s.close();
	}
}

async function rtnl() {
	const r = await Rtnl.open();
	try {
		assert.ok(await r.getLink('lo'));
		await r.ensureDummyLink('vg-dummy0');
		await r.addAddresses('vg-dummy0', ['10.6.0.1/32', 'fd00:6::1/128']);
		assert.ok((await r.listAddresses('vg-dummy0')).length >= 2);
		await r.deleteLink('vg-dummy0');
	} finally {
		r.close();
	}
}

for (let i = 0; i < rounds; i++) {
	await ipvs();
	await ipvsBulk();
	await ipset();
	await rtnl();
}
console.log(`valgrind-exercise: ${rounds} rounds of IPVS, ipset and rtnetlink done`);
