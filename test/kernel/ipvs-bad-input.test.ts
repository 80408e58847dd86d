/**
 * Bad input, every public method of Ipvs, Ipset and Rtnl: wrong types,
 * out-of-range numbers, bad addresses and CIDRs, over-long names, mismatched
 * families, unknown enums and options, missing fields. Each call must fail
 * with a TypeError or RangeError whose message names the field (for Ipvs
 * and Rtnl, also the code and field the checking module's rule gives it:
 * lib/util/check.ts), send nothing
 * (counters() of all three handles unchanged), and leave the kernel as it was
 * (ipvsadm -Sn, ipset save and ip addr in the namespace, before and after).
 *
 * Methods that take no argument (info, listServices, dump, flush,
 * getTimeouts, listDaemons, protocol, listNames, close, counters) have no
 * input to get wrong and are not in the table.
 */
import t from 'tap';
import { Ipset, Ipvs, Rtnl } from '../../lib/index.js';
import { ipvsEnv } from '../support/ipvs-env.js';

type Kind = typeof TypeError | typeof RangeError;
interface Row {
  call: string;
  run: () => unknown;
  error: Kind;
  /** What the message must say: the field it names. */
  names: RegExp;
  /** The rule's code for it (the Ipvs and Rtnl rows). */
  code?: 'ERR_INVALID_ARG_TYPE' | 'ERR_INVALID_ARG_VALUE' | 'ERR_OUT_OF_RANGE';
}

const key = { protocol: 'tcp', address: '10.0.0.1', port: 80 } as const;
const dest = { address: '10.0.1.2', port: 80 } as const;
// Calls that must be refused, written as a caller might get them wrong.
const bad = (v: unknown) => v as never;

t.test('malformed calls to every public method: a typed error naming the field, nothing sent, nothing changed', async (t) => {
  const env = await ipvsEnv(t);
  const { ns, ipvs } = env;
  const ipset = await Ipset.open({ netns: ns.path });
  t.teardown(() => ipset.close());
  const rt = await Rtnl.open({ netns: ns.path });
  t.teardown(() => rt.close());

  // Something in the kernel to leave alone.
  await ipvs.addService({ ...key, scheduler: 'rr' });
  await ipvs.addDestination(key, dest);
  await ipset.create('web', 'hash:ip,port', { timeout: 600, comment: true });
  await ipset.create('nets', 'hash:net');
  await ipset.addMany('web', ['10.0.0.1,tcp:80']);
  const kernel = async () => ({
    ipvs: await ns.exec('ipvsadm', ['-Sn']),
    // Remaining timeouts tick; everything else must be the same.
    ipset: (await ns.exec('ipset', ['save'])).replace(/ timeout \d+/g, ' timeout ~'),
    addresses: await ns.exec('ip', ['-o', 'addr']),
  });
  const before = await kernel();

  const rows: Row[] = [
    // --- Ipvs.open / Rtnl.open / Ipset.open
    { call: 'Ipvs.open({ netns: 5 })', run: () => Ipvs.open(bad({ netns: 5 })), error: TypeError, names: /options\.netns/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: 'Ipvs.open({ timeoutMs: 0 })', run: () => Ipvs.open({ timeoutMs: 0 }), error: RangeError, names: /options\.timeoutMs/, code: 'ERR_OUT_OF_RANGE' },
    { call: 'Ipvs.open(null)', run: () => Ipvs.open(bad(null)), error: TypeError, names: /options/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: 'Ipvs.open({ netNs }) (misspelt)', run: () => Ipvs.open(bad({ netNs: ns.path })), error: TypeError, names: /netNs/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: 'Ipset.open({ timeoutMs: 1.5 })', run: () => Ipset.open({ timeoutMs: 1.5 }), error: RangeError, names: /options\.timeoutMs/, code: 'ERR_OUT_OF_RANGE' },
    { call: "Rtnl.open({ timeoutMs: 'fast' })", run: () => Rtnl.open(bad({ timeoutMs: 'fast' })), error: TypeError, names: /options\.timeoutMs/, code: 'ERR_INVALID_ARG_TYPE' },

    // --- Ipvs: service keys
    { call: 'getService(undefined)', run: () => ipvs.getService(bad(undefined)), error: TypeError, names: /service/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: "getService({ protocol: 'icmp' })", run: () => ipvs.getService(bad({ ...key, protocol: 'icmp' })), error: TypeError, names: /protocol/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: "getService({ address: '10.0.0.300' })", run: () => ipvs.getService({ ...key, address: '10.0.0.300' }), error: TypeError, names: /address/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: "getService({ address: '10.0.0.0/24' })", run: () => ipvs.getService({ ...key, address: '10.0.0.0/24' }), error: TypeError, names: /address/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: 'getService({ port: 70000 })', run: () => ipvs.getService({ ...key, port: 70000 }), error: RangeError, names: /port/, code: 'ERR_OUT_OF_RANGE' },
    { call: "getService({ port: '80' })", run: () => ipvs.getService(bad({ ...key, port: '80' })), error: TypeError, names: /port/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: 'getService({ no port })', run: () => ipvs.getService(bad({ protocol: 'tcp', address: '10.0.0.1' })), error: TypeError, names: /port/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: 'getService({ fwmark: 0 })', run: () => ipvs.getService({ fwmark: 0, family: 'inet' }), error: RangeError, names: /fwmark/, code: 'ERR_OUT_OF_RANGE' },
    { call: 'getService({ fwmark: 2**32 })', run: () => ipvs.getService({ fwmark: 2 ** 32, family: 'inet' }), error: RangeError, names: /fwmark/, code: 'ERR_OUT_OF_RANGE' },
    { call: "getService({ family: 'ipx' })", run: () => ipvs.getService(bad({ fwmark: 5, family: 'ipx' })), error: TypeError, names: /family/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: "deleteService({ address: '1.2.3.4.5' })", run: () => ipvs.deleteService({ ...key, address: '1.2.3.4.5' }), error: TypeError, names: /address/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: 'listDestinations({ fwmark: -1 })', run: () => ipvs.listDestinations({ fwmark: -1, family: 'inet' }), error: RangeError, names: /fwmark/, code: 'ERR_OUT_OF_RANGE' },
    { call: "zero({ address: 'x' })", run: () => ipvs.zero({ ...key, address: 'x' }), error: TypeError, names: /address/, code: 'ERR_INVALID_ARG_VALUE' },

    // --- Ipvs: service specs
    { call: 'addService({ scheduler: 5 })', run: () => ipvs.addService(bad({ ...key, scheduler: 5 })), error: TypeError, names: /scheduler/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: 'addService({ scheduler: 16 chars })', run: () => ipvs.addService({ ...key, scheduler: 'x'.repeat(16) }), error: RangeError, names: /scheduler/, code: 'ERR_OUT_OF_RANGE' },
    { call: 'addService({ persistent: { timeout: -1 } })', run: () => ipvs.addService({ ...key, persistent: { timeout: -1 } }), error: RangeError, names: /persistent\.timeout/, code: 'ERR_OUT_OF_RANGE' },
    { call: 'addService({ persistent: { netmask: 33 } })', run: () => ipvs.addService({ ...key, persistent: { timeout: 60, netmask: 33 } }), error: RangeError, names: /netmask/, code: 'ERR_OUT_OF_RANGE' },
    { call: "addService({ persistent: { netmask: '255.0.255.0' } })", run: () => ipvs.addService({ ...key, persistent: { timeout: 60, netmask: '255.0.255.0' } }), error: TypeError, names: /netmask/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: 'addService(IPv6 with an IPv4 netmask)', run: () => ipvs.addService({ ...key, address: 'fd00::1', persistent: { timeout: 60, netmask: '255.255.255.0' } }), error: TypeError, names: /netmask/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: "addService({ flags: { onePacket: 'yes' } })", run: () => ipvs.addService(bad({ ...key, flags: { onePacket: 'yes' } })), error: TypeError, names: /onePacket/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: 'addService({ flags: { bogus } })', run: () => ipvs.addService(bad({ ...key, flags: { bogus: true } })), error: TypeError, names: /bogus/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: 'addService({ peName: 40 chars })', run: () => ipvs.addService({ ...key, persistent: { timeout: 60 }, peName: 'x'.repeat(40) }), error: RangeError, names: /peName/, code: 'ERR_OUT_OF_RANGE' },
    { call: 'addService({ unknown option })', run: () => ipvs.addService(bad({ ...key, schedular: 'rr' })), error: TypeError, names: /schedular/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: 'updateService(null)', run: () => ipvs.updateService(bad(null)), error: TypeError, names: /service/, code: 'ERR_INVALID_ARG_TYPE' },

    // --- Ipvs: destinations
    { call: 'addDestination({ weight: -1 })', run: () => ipvs.addDestination(key, { ...dest, weight: -1 }), error: RangeError, names: /weight/, code: 'ERR_OUT_OF_RANGE' },
    { call: "addDestination({ forward: 'nat' })", run: () => ipvs.addDestination(key, bad({ ...dest, forward: 'nat' })), error: TypeError, names: /forward/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: "addDestination({ tunnel: { type: 'vxlan' } })", run: () => ipvs.addDestination(key, bad({ ...dest, forward: 'tunnel', tunnel: { type: 'vxlan' } })), error: TypeError, names: /tunnel\.type/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: "addDestination({ tunnel: { type: 'gue' } }) (no port)", run: () => ipvs.addDestination(key, { ...dest, forward: 'tunnel', tunnel: { type: 'gue' } }), error: TypeError, names: /tunnel\.port/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: 'addDestination({ upperThreshold: -5 })', run: () => ipvs.addDestination(key, { ...dest, upperThreshold: -5 }), error: RangeError, names: /upperThreshold/, code: 'ERR_OUT_OF_RANGE' },
    { call: 'addDestination(IPv4 service, IPv6 masq destination)', run: () => ipvs.addDestination(key, { address: 'fd00:1::2', port: 80 }), error: TypeError, names: /address|family/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: 'addDestination({ no address })', run: () => ipvs.addDestination(key, bad({ port: 80 })), error: TypeError, names: /address/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: 'updateDestination({ port: 1.5 })', run: () => ipvs.updateDestination(key, { ...dest, port: 1.5 }), error: RangeError, names: /destination\.port/, code: 'ERR_OUT_OF_RANGE' },
    { call: "deleteDestination({ address: '10.0.1.2/24' })", run: () => ipvs.deleteDestination(key, { ...dest, address: '10.0.1.2/24' }), error: TypeError, names: /address/, code: 'ERR_INVALID_ARG_VALUE' },

    // --- Ipvs: batches, timeouts, daemons
    { call: "apply('x')", run: () => ipvs.apply(bad('x')), error: TypeError, names: /ops/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: "apply([{ op: 'frobService' }])", run: () => ipvs.apply(bad([{ op: 'frobService', service: key }])), error: TypeError, names: /ops\[0\]\.op/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: 'apply([... destination.port 70000])', run: () => ipvs.apply([{ op: 'addDestination', service: key, destination: { ...dest, port: 70000 } }]), error: RangeError, names: /ops\[0\]\.destination\.port/, code: 'ERR_OUT_OF_RANGE' },
    { call: 'apply([good, { no service }])', run: () => ipvs.apply(bad([{ op: 'deleteService', service: key }, { op: 'deleteService' }])), error: TypeError, names: /ops\[1\]\.service/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: 'setTimeouts({ tcp: -1 })', run: () => ipvs.setTimeouts({ tcp: -1 }), error: RangeError, names: /tcp/, code: 'ERR_OUT_OF_RANGE' },
    { call: "setTimeouts({ udp: 'a' })", run: () => ipvs.setTimeouts(bad({ udp: 'a' })), error: TypeError, names: /udp/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: 'setTimeouts({ tcpfin }) (misspelt)', run: () => ipvs.setTimeouts(bad({ tcpfin: 10 })), error: TypeError, names: /tcpfin/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: "startDaemon({ state: 'primary' })", run: () => ipvs.startDaemon(bad({ state: 'primary', interface: 'lo' })), error: TypeError, names: /state/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: "startDaemon({ interface: '' })", run: () => ipvs.startDaemon({ state: 'master', interface: '' }), error: TypeError, names: /interface/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: 'startDaemon({ syncId: 256 })', run: () => ipvs.startDaemon({ state: 'master', interface: 'lo', syncId: 256 }), error: RangeError, names: /syncId/, code: 'ERR_OUT_OF_RANGE' },
    { call: "startDaemon({ group: 'not-an-ip' })", run: () => ipvs.startDaemon({ state: 'master', interface: 'lo', group: 'not-an-ip' }), error: TypeError, names: /group/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: "stopDaemon('both')", run: () => ipvs.stopDaemon(bad('both')), error: TypeError, names: /state/, code: 'ERR_INVALID_ARG_VALUE' },

    // --- Ipset: names, types, create options
    { call: "create('', 'hash:ip')", run: () => ipset.create('', 'hash:ip'), error: TypeError, names: /name/ },
    { call: 'create(32 chars)', run: () => ipset.create('x'.repeat(32), 'hash:ip'), error: RangeError, names: /name/ },
    { call: "create('a\\nb')", run: () => ipset.create('a\nb', 'hash:ip'), error: TypeError, names: /name/ },
    { call: "create('c', 'hash:macc')", run: () => ipset.create('c', bad('hash:macc')), error: TypeError, names: /type/ },
    { call: "create({ family: 'inet4' })", run: () => ipset.create('c', 'hash:ip', bad({ family: 'inet4' })), error: TypeError, names: /family/ },
    { call: 'create({ hashSize: 0 })', run: () => ipset.create('c', 'hash:ip', { hashSize: 0 }), error: RangeError, names: /hashSize/ },
    { call: 'create({ maxElem: 1.5 })', run: () => ipset.create('c', 'hash:ip', { maxElem: 1.5 }), error: RangeError, names: /maxElem/ },
    { call: 'create({ timeout: -1 })', run: () => ipset.create('c', 'hash:ip', { timeout: -1 }), error: RangeError, names: /timeout/ },
    { call: 'create(hash:ip inet, { netmask: 33 })', run: () => ipset.create('c', 'hash:ip', { netmask: 33 }), error: RangeError, names: /netmask/ },
    { call: 'create(hash:net, { netmask: 24 })', run: () => ipset.create('c', 'hash:net', { netmask: 24 }), error: TypeError, names: /netmask/ },
    { call: "create(bitmap:ip, { range: '10.0.0.5-10.0.0.1' })", run: () => ipset.create('c', 'bitmap:ip', { range: '10.0.0.5-10.0.0.1' }), error: RangeError, names: /range/ },
    { call: "create(bitmap:ip, { family: 'inet6' })", run: () => ipset.create('c', 'bitmap:ip', { range: '10.0.0.0/24', family: 'inet6' }), error: TypeError, names: /inet6|family/ },
    { call: 'create(hash:ip, { size: 8 })', run: () => ipset.create('c', 'hash:ip', { size: 8 }), error: TypeError, names: /size/ },
    { call: 'create({ hashsize }) (misspelt)', run: () => ipset.create('c', 'hash:ip', bad({ hashsize: 1024 })), error: TypeError, names: /hashsize/ },
    { call: 'create({ bucketSize: 0 })', run: () => ipset.create('c', 'hash:ip', { bucketSize: 0 }), error: RangeError, names: /bucketSize/ },
    { call: "create(list:set, { counters: 'yes' })", run: () => ipset.create('c', 'list:set', bad({ counters: 'yes' })), error: TypeError, names: /counters/ },
    { call: 'destroy(5)', run: () => ipset.destroy(bad(5)), error: TypeError, names: /name/ },
    { call: "flush('')", run: () => ipset.flush(''), error: TypeError, names: /name/ },
    { call: "rename('web', 40 chars)", run: () => ipset.rename('web', 'x'.repeat(40)), error: RangeError, names: /to/ },
    { call: "swap(undefined, 'web')", run: () => ipset.swap(bad(undefined), 'web'), error: TypeError, names: /\ba\b/ },
    { call: 'list(5)', run: () => ipset.list(bad(5)), error: TypeError, names: /name/ },
    { call: 'header(32 chars)', run: () => ipset.header('x'.repeat(32)), error: RangeError, names: /name/ },

    // --- Ipset: entries (parsed against the set's type, which the handle knows)
    { call: "add('web', '10.0.0.300,tcp:80')", run: () => ipset.add('web', '10.0.0.300,tcp:80'), error: TypeError, names: /ip must be an IPv4 address/ },
    { call: "add('nets', '10.0.0.0/33')", run: () => ipset.add('nets', '10.0.0.0/33'), error: RangeError, names: /prefix length/ },
    { call: "add('web', port 70000)", run: () => ipset.add('web', '10.0.0.1,tcp:70000'), error: RangeError, names: /port/ },
    { call: "add('web', IPv6 entry in an inet set)", run: () => ipset.add('web', 'fd00::1,tcp:80'), error: TypeError, names: /ip must be an IPv4/ },
    { call: "add('web', { ip } without port)", run: () => ipset.add('web', { ip: '10.0.0.1' }), error: TypeError, names: /port/ },
    { call: 'add({ timeout: -1 })', run: () => ipset.add('web', '10.0.0.1,tcp:80', { timeout: -1 }), error: RangeError, names: /timeout/ },
    { call: "add({ comment: 'a\"b' })", run: () => ipset.add('web', '10.0.0.1,tcp:80', { comment: 'a"b' }), error: TypeError, names: /comment/ },
    { call: 'add({ packets: -1 })', run: () => ipset.add('web', '10.0.0.1,tcp:80', { packets: -1 }), error: RangeError, names: /packets/ },
    { call: 'add({ bogus })', run: () => ipset.add('web', '10.0.0.1,tcp:80', bad({ bogus: 1 })), error: TypeError, names: /bogus/ },
    { call: "add('nets', { nomatch: 'yes' })", run: () => ipset.add('nets', '10.0.0.0/24', bad({ nomatch: 'yes' })), error: TypeError, names: /nomatch/ },
    { call: 'add(hash:net without counters, { packets: 1 })', run: () => ipset.add('nets', '10.0.0.0/24', { packets: 1 }), error: TypeError, names: /packets/ },
    { call: 'del({ timeout: 5 })', run: () => ipset.del('web', '10.0.0.1,tcp:80', bad({ timeout: 5 })), error: TypeError, names: /timeout/ },
    { call: "test('web', 42)", run: () => ipset.test('web', bad(42)), error: TypeError, names: /entry/ },
    { call: "addMany('web', 'x')", run: () => ipset.addMany('web', bad('x')), error: TypeError, names: /entries/ },
    { call: "addMany('web', [good, port 99999])", run: () => ipset.addMany('web', ['10.0.0.1,tcp:80', '10.0.0.2,udp:99999']), error: RangeError, names: /entry 1 .*port/ },
    { call: "delMany('web', [null])", run: () => ipset.delMany('web', bad([null])), error: TypeError, names: /entries\[0\]/ },
    { call: "addMany({ exist: 'y' })", run: () => ipset.addMany('web', [], bad({ exist: 'y' })), error: TypeError, names: /exist/ },
    { call: 'addMany({ bogus })', run: () => ipset.addMany('web', [], bad({ bogus: true })), error: TypeError, names: /bogus/ },
    { call: "replace('web', 'x')", run: () => ipset.replace('web', bad('x')), error: TypeError, names: /entries/ },
    { call: "replace('web', [bad entry])", run: () => ipset.replace('web', ['10.0.0.1,tcp:80', '10.0.0.2,tcp:x:y']), error: TypeError, names: /entry 1/ },
    { call: "replace('new', entries, { type: 'hash:macc' })", run: () => ipset.replace('new', [], bad({ type: 'hash:macc' })), error: TypeError, names: /spec\.type/ },
    { call: "replace('new', [IPv4], { family: 'inet6' })", run: () => ipset.replace('new', ['10.0.0.1'], { type: 'hash:ip', family: 'inet6' }), error: TypeError, names: /ip must be an IPv6/ },

    // --- Rtnl
    { call: "getLink('')", run: () => rt.getLink(''), error: TypeError, names: /^name must be a non-empty name/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: 'getLink(16 chars)', run: () => rt.getLink('x'.repeat(16)), error: RangeError, names: /^name must be at most 15 bytes/, code: 'ERR_OUT_OF_RANGE' },
    { call: "ensureDummyLink('a/b')", run: () => rt.ensureDummyLink('a/b'), error: TypeError, names: /^name must be an interface name/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: 'deleteLink(5)', run: () => rt.deleteLink(bad(5)), error: TypeError, names: /^name must be a string/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: 'listAddresses(7)', run: () => rt.listAddresses(bad(7)), error: TypeError, names: /^link must be a string/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: "addAddresses('d0', '10.0.0.1')", run: () => rt.addAddresses('d0', bad('10.0.0.1')), error: TypeError, names: /^addresses must be an array/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: "addAddresses('d0', ['10.0.0.256'])", run: () => rt.addAddresses('d0', ['10.0.0.256']), error: TypeError, names: /^addresses\[0\] must be an IPv4 or IPv6 address/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: "addAddresses('d0', ['10.0.0.1/33'])", run: () => rt.addAddresses('d0', ['10.0.0.1/33']), error: RangeError, names: /^addresses\[0\] must be an address with a prefix length from 1 to 32/, code: 'ERR_OUT_OF_RANGE' },
    { call: "addAddresses('d0', ['10.0.0.1/8/8'])", run: () => rt.addAddresses('d0', ['10.0.0.1/8/8']), error: TypeError, names: /^addresses\[0\] must be an address with a prefix length/, code: 'ERR_INVALID_ARG_VALUE' },
    { call: "addAddresses('d0', [good, 'fd00::1/129'])", run: () => rt.addAddresses('d0', ['10.0.9.9', 'fd00::1/129']), error: RangeError, names: /^addresses\[1\] must be an address with a prefix length from 1 to 128/, code: 'ERR_OUT_OF_RANGE' },
    { call: "addAddresses('d0', [5])", run: () => rt.addAddresses('d0', bad([5])), error: TypeError, names: /^addresses\[0\] must be a string/, code: 'ERR_INVALID_ARG_TYPE' },
    { call: "addAddresses(16 chars, [...])", run: () => rt.addAddresses('x'.repeat(16), ['10.0.0.1']), error: RangeError, names: /^link must be at most 15 bytes/, code: 'ERR_OUT_OF_RANGE' },
    { call: "deleteAddresses('d0', ['fd00::zz'])", run: () => rt.deleteAddresses('d0', ['fd00::zz']), error: TypeError, names: /^addresses\[0\] must be an IPv4 or IPv6 address/, code: 'ERR_INVALID_ARG_VALUE' },
  ];

  const sent = () => [ipvs, ipset, rt].map((h) => h.counters()).map((c) => c.sendmsgCalls + c.messagesSent);
  for (const row of rows) {
    // Entries are parsed against the set's type: the handle must know it
    // (a refused entry makes it forget, in case the set was re-created).
    await ipset.test('web', '10.0.0.1,tcp:80');
    await ipset.test('nets', '10.0.0.0/24');
    const counters = sent();
    let thrown: unknown;
    try {
      const accepted = await row.run();
      // A handle opened by mistake is closed again.
      if (accepted && typeof (accepted as { close?: unknown }).close === 'function') (accepted as { close(): void }).close();
    } catch (err) {
      thrown = err;
    }
    if (!(thrown instanceof row.error)) {
      t.fail(`${row.call}: expected a ${row.error.name}, got ${thrown === undefined ? 'success' : String(thrown)}`);
      continue;
    }
    t.match((thrown as Error).message, row.names, `${row.call}: ${row.error.name} "${(thrown as Error).message}"`);
    if (row.code) t.equal((thrown as { code?: unknown }).code, row.code, `${row.call}: ${row.code}`);
    t.same(sent(), counters, `${row.call}: nothing sent`);
  }
  t.same(await kernel(), before, 'ipvsadm -Sn, ipset save and ip addr are as before');
});
