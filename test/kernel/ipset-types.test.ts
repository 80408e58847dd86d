// Every supported set type and option, IPv4 and IPv6, cross-checked with
// the `ipset` tool both ways, each case in a fresh network namespace:
//  - what the library writes, `ipset save` shows exactly (and our list()
//    returns the same lines);
//  - what `ipset restore` writes, our list() returns exactly.
// Remaining timeouts tick down between two reads, so "timeout N" is
// compared within 2 seconds.
import t from 'tap';

import { Ipset, type CreateOptions, type SetType } from '../../lib/ipset/index.js';
import { listedLines, sameLines, toolSave } from '../support/ipset-tool.js';
import { freshNetns, type Netns } from '../support/netns.js';

interface Case {
  title: string;
  sets: Array<{ name: string; type: SetType; options?: CreateOptions; tool: string; entries: string[] }>;
}

const cases: Case[] = [
  {
    title: 'hash:ip inet with every extension',
    sets: [{
      name: 'a', type: 'hash:ip', options: { timeout: 600, counters: true, comment: true, skbinfo: true },
      tool: 'hash:ip timeout 600 counters comment skbinfo',
      entries: [
        '10.0.0.1 timeout 100 packets 5 bytes 500 comment "hello world" skbmark 0x10/0xff skbprio 1:2 skbqueue 3',
        '10.0.0.2', '10.0.0.3 timeout 0 skbmark 0x7', '10.0.0.4 comment "x"',
      ],
    }],
  },
  {
    title: 'hash:ip inet6 with netmask, and inet with netmask',
    sets: [
      { name: 'p', type: 'hash:ip', options: { family: 'inet6', netmask: 64 }, tool: 'hash:ip family inet6 netmask 64', entries: ['fd00::1', 'fd00:0:0:1::5'] },
      { name: 'k', type: 'hash:ip', options: { netmask: 24 }, tool: 'hash:ip netmask 24', entries: ['10.9.9.9', '10.9.8.1'] },
    ],
  },
  {
    title: 'hash:ip,port inet and inet6, every protocol form',
    sets: [
      {
        name: 'b4', type: 'hash:ip,port', tool: 'hash:ip,port',
        entries: ['10.0.0.1,tcp:80', '10.0.0.1,udp:53', '10.0.0.1,sctp:1', '10.0.0.1,udplite:5', '10.0.0.1,icmp:echo-request', '10.0.0.1,icmp:250/7', '10.0.0.2,gre:0', '10.0.0.3,443'],
      },
      {
        name: 'b6', type: 'hash:ip,port', options: { family: 'inet6' }, tool: 'hash:ip,port family inet6',
        entries: ['fd00::1,tcp:443', 'fd00::2,udp:53', 'fd00::3,ipv6-icmp:echo-request', 'fd00::3,icmpv6:200/1'],
      },
    ],
  },
  {
    title: 'hash:ip,port,ip and hash:ip,port,net',
    sets: [
      { name: 'c4', type: 'hash:ip,port,ip', tool: 'hash:ip,port,ip', entries: ['10.0.0.1,tcp:80,10.0.0.2', '10.0.0.1,udp:53,10.0.0.3'] },
      { name: 'c6', type: 'hash:ip,port,ip', options: { family: 'inet6' }, tool: 'hash:ip,port,ip family inet6', entries: ['fd00::1,tcp:80,fd00::2'] },
      {
        name: 'd4', type: 'hash:ip,port,net', options: { counters: true }, tool: 'hash:ip,port,net counters',
        entries: ['10.0.0.1,udp:53,10.1.0.0/16', '10.0.0.1,udp:53,10.2.0.0/16 nomatch', '10.0.0.1,tcp:1,10.3.0.1 packets 3 bytes 4'],
      },
      { name: 'd6', type: 'hash:ip,port,net', options: { family: 'inet6' }, tool: 'hash:ip,port,net family inet6', entries: ['fd00::1,tcp:1,fd01::/64', 'fd00::1,tcp:1,fd01::1'] },
    ],
  },
  {
    title: 'hash:net, hash:net,port, hash:net,iface',
    sets: [
      { name: 'e4', type: 'hash:net', options: { timeout: 300, comment: true }, tool: 'hash:net timeout 300 comment', entries: ['10.0.0.0/24 comment "a b"', '10.0.0.5 nomatch timeout 50', '192.168.0.0/16'] },
      { name: 'e6', type: 'hash:net', options: { family: 'inet6' }, tool: 'hash:net family inet6', entries: ['fd00::/64', 'fd01::1'] },
      { name: 'f4', type: 'hash:net,port', tool: 'hash:net,port', entries: ['10.0.0.0/24,tcp:80', '10.0.0.0/24,icmp:3/4', '10.0.0.0/24,udp:53 nomatch'] },
      { name: 'f6', type: 'hash:net,port', options: { family: 'inet6' }, tool: 'hash:net,port family inet6', entries: ['fd00::/64,sctp:9'] },
      {
        name: 'g4', type: 'hash:net,iface', tool: 'hash:net,iface',
        entries: ['10.0.0.0/24,eth0', '10.0.0.0/24,physdev:eth1', '10.0.0.0/24,wild+', '10.0.0.7,eth0 nomatch'],
      },
      { name: 'g6', type: 'hash:net,iface', options: { family: 'inet6' }, tool: 'hash:net,iface family inet6', entries: ['fd00::/8,lo'] },
    ],
  },
  {
    title: 'bitmap:port, bitmap:ip',
    sets: [
      { name: 'h', type: 'bitmap:port', options: { range: '1024-65535', timeout: 0 }, tool: 'bitmap:port range 1024-65535 timeout 0', entries: ['30080', '2000 timeout 100'] },
      { name: 'o', type: 'bitmap:port', options: { range: '0-1000', skbinfo: true }, tool: 'bitmap:port range 0-1000 skbinfo', entries: ['22 skbmark 0x5 skbprio 0:1', '23'] },
      { name: 'i', type: 'bitmap:ip', options: { range: '10.0.0.0/16', netmask: 24 }, tool: 'bitmap:ip range 10.0.0.0/16 netmask 24', entries: ['10.0.1.0/24', '10.0.7.9'] },
      { name: 'm', type: 'bitmap:ip', options: { range: '10.0.0.1-10.0.0.100', counters: true }, tool: 'bitmap:ip range 10.0.0.1-10.0.0.100 counters', entries: ['10.0.0.5', '10.0.0.6 packets 1 bytes 2'] },
    ],
  },
  {
    title: 'list:set',
    sets: [
      { name: 'm1', type: 'hash:ip', tool: 'hash:ip', entries: ['10.0.0.1'] },
      { name: 'm2', type: 'hash:net', tool: 'hash:net', entries: [] },
      { name: 'j', type: 'list:set', options: { size: 8 }, tool: 'list:set size 8', entries: ['m1', 'm2'] },
      { name: 'q', type: 'list:set', options: { size: 4, timeout: 10, counters: true, comment: true }, tool: 'list:set size 4 timeout 10 counters comment', entries: ['m1 timeout 5 comment "zz" packets 1 bytes 2'] },
    ],
  },
];

/** "add NAME ENTRY" lines of `ipset save`, as "NAME ENTRY", sorted. */
async function saved(ns: Netns): Promise<string[]> {
  return (await toolSave(ns)).adds.sort();
}

for (const c of cases) {
  t.test(c.title, async (t) => {
    const names = c.sets.map((s) => s.name);
    // The library writes; the tool reads.
    const ns1 = await freshNetns(t, 'ipset');
    const ours = await Ipset.open({ netns: ns1.path });
    t.teardown(() => ours.close());
    for (const s of c.sets) {
      await ours.create(s.name, s.type, s.options);
      if (s.entries.length) t.equal(await ours.addMany(s.name, s.entries), s.entries.length, `${s.name}: all applied`);
    }
    const savedByTool = await saved(ns1);
    sameLines(t, await listedLines(ours, names), savedByTool, 'our list() = ipset save, after we wrote', 2);
    t.equal(savedByTool.length, c.sets.reduce((n, s) => n + s.entries.length, 0), 'every entry is there');

    // The tool writes; the library reads.
    const ns2 = await freshNetns(t, 'ipset');
    const script = c.sets.flatMap((s) => [`create ${s.name} ${s.tool}`, ...s.entries.map((e) => `add ${s.name} ${e}`)]).join('\n') + '\n';
    await ns2.exec('ipset', ['restore'], script);
    const reader = await Ipset.open({ netns: ns2.path });
    t.teardown(() => reader.close());
    const restored = await saved(ns2);
    sameLines(t, await listedLines(reader, names), restored, 'our list() = ipset save, after ipset restore wrote', 2);
    // Two namespaces' remaining timeouts, each counted from its own writes: a slow machine ages them apart by seconds
    // (each side's own are held to the tool's within 2 s above).
    sameLines(t, restored, savedByTool, 'the same entries whichever wrote them');
    for (const s of c.sets) {
      const h = await reader.header(s.name);
      t.equal(h.type, s.type, `${s.name}: header type`);
      if (s.type.startsWith('hash:')) t.equal(h.family, s.options?.family ?? 'inet', `${s.name}: family`);
    }
  });
}
