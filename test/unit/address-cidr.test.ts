// lib/util/cidr.ts, published as `ipvs-netlink/address`: CIDRs as the
// kernel and ipset read them (host bits cleared), containment checked
// against ipaddr.js (which nobody here wrote), and a module that a planner
// can load without the addon.
import t from 'tap';
import ipaddr from 'ipaddr.js';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ArgumentTypeError } from '../../lib/util/check.js';
import { canonicalAddress, cidrContains, familyOf, naturalCompare, parseCidr } from '../../lib/util/cidr.js';

t.test('parseCidr clears the host bits and spells the network canonically', (t) => {
  t.strictSame(parseCidr(' 10.1.2.3/8 ', 'f'), { family: 'inet', network: '10.0.0.0', prefix: 8, text: '10.0.0.0/8' });
  t.strictSame(parseCidr('FD00:0:0:0::1/64', 'f'), { family: 'inet6', network: 'fd00::', prefix: 64, text: 'fd00::/64' });
  t.equal(parseCidr('192.168.1.77/32', 'f').text, '192.168.1.77/32');
  t.equal(parseCidr('0.0.0.0/0', 'f').text, '0.0.0.0/0');
  t.end();
});

t.test('parseCidr refuses what is not a CIDR, naming the field', (t) => {
  for (const bad of ['10.0.0.0', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/x', '10.0.0.0/-1', 'ten/8']) {
    t.throws(() => parseCidr(bad, 'spec.loadBalancerSourceRanges[0]'), { name: 'TypeError', message: /^spec\.loadBalancerSourceRanges\[0\]/ }, bad);
  }
  const err = (() => {
    try {
      parseCidr('10.0.0.0/40', 'ranges[2]');
    } catch (e) {
      return e;
    }
  })();
  t.ok(err instanceof ArgumentTypeError, 'the checking module\'s error');
  t.match(err, { code: 'ERR_INVALID_ARG_VALUE', field: 'ranges[2]', value: '10.0.0.0/40' });
  t.end();
});

t.test('cidrContains agrees with ipaddr.js, and never across families', (t) => {
  const cidrs = ['10.0.0.0/8', '10.244.1.0/24', '192.168.56.10/32', '0.0.0.0/0', 'fd00::/8', 'fd00:1::/64', '::/0'];
  const addresses = ['10.1.2.3', '10.244.1.9', '10.244.2.9', '192.168.56.10', '192.168.56.11', 'fd00::1', 'fd00:1::99', 'fe80::1', '::ffff:10.0.0.1'];
  for (const c of cidrs) {
    const [base, bits] = ipaddr.parseCIDR(c);
    for (const a of addresses) {
      const ip = ipaddr.parse(a);
      const want = ip.kind() === base.kind() && ip.match(base, bits);
      t.equal(cidrContains(parseCidr(c, 'c'), a), want, `${a} in ${c}`);
    }
  }
  t.notOk(cidrContains(parseCidr('10.0.0.0/8', 'c'), 'not an address'));
  t.end();
});

t.test('canonical text, families, natural order', (t) => {
  const quad = '10.0.0.1';
  t.equal(canonicalAddress(quad), quad, 'a dotted quad is the very string given');
  t.equal(canonicalAddress('FD00:0::0:1'), 'fd00::1');
  t.equal(canonicalAddress('10.0.0.01'), undefined, 'leading zeros are not an address');
  t.equal(canonicalAddress('fe80::1%eth0'), undefined, 'nor a zone');
  t.equal(familyOf('10.0.0.1'), 'inet');
  t.equal(familyOf('::1'), 'inet6');
  t.strictSame(['10.0.0.10', '10.0.0.9', '10.0.0.100'].sort(naturalCompare), ['10.0.0.9', '10.0.0.10', '10.0.0.100']);
  t.end();
});

t.test('`ipvs-netlink/address` loads no addon', (t) => {
  // An addon path that cannot load: importing the subpath must not try it, while the main entry does.
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const env = { ...process.env, NODE_OPTIONS: '', IPVS_NETLINK_ADDON: '/nonexistent/ipvs_netlink.node' };
  const load = (what: string) => spawnSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(what)}); await m.Ipvs?.open?.();`], { cwd: root, env, encoding: 'utf8' });
  const address = load('ipvs-netlink/address');
  t.equal(address.status, 0, address.stderr);
  const main = load('ipvs-netlink');
  t.not(main.status, 0, 'the main entry does load it (so the check above can fail)');
  t.end();
});
