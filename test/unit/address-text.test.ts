// ipv4Text spells the IPv4 addresses of every IPVS reply (100,000 in a big
// dump); it must agree with ipaddr.js, which nobody here wrote, byte for
// byte, and leave nothing of one address in the next.
import t from 'tap';
import ipaddr from 'ipaddr.js';

import { ipv4Text } from '../../lib/util/address.js';

const reference = (b: Uint8Array, at: number) => ipaddr.fromByteArray([...b.subarray(at, at + 4)]).toString();

t.test('every digit count in every position, as ipaddr.js spells it', (t) => {
  const values = [0, 1, 9, 10, 11, 99, 100, 101, 109, 110, 199, 200, 249, 250, 255];
  const b = new Uint8Array(4);
  let checked = 0;
  for (const a of values)
    for (const c of values)
      for (const d of values)
        for (const e of values) {
          b.set([a, c, d, e]);
          const got = ipv4Text(b, 0);
          if (got !== reference(b, 0)) t.fail(`${[a, c, d, e]} spelled ${got}`);
          checked++;
        }
  t.equal(checked, values.length ** 4);
  t.end();
});

t.test('reads the four bytes at the offset and nothing around them', (t) => {
  const b = Uint8Array.from([7, 255, 0, 10, 1, 99]);
  t.equal(ipv4Text(b, 1), '255.0.10.1');
  t.equal(ipv4Text(b, 2), '0.10.1.99');
  // A long address, then a short one: the scratch space holds no leftovers.
  t.equal(ipv4Text(Uint8Array.from([255, 255, 255, 255]), 0), '255.255.255.255');
  t.equal(ipv4Text(Uint8Array.from([1, 2, 3, 4]), 0), '1.2.3.4');
  t.end();
});

t.test('random addresses', (t) => {
  const b = new Uint8Array(4000);
  for (let i = 0; i < b.length; i++) b[i] = Math.floor(Math.random() * 256);
  for (let at = 0; at + 4 <= b.length; at += 4) if (ipv4Text(b, at) !== reference(b, at)) t.fail(`bytes ${[...b.subarray(at, at + 4)]}`);
  t.pass('1,000 random addresses agree');
  t.end();
});
