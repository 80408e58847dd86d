// ipv4Text spells the IPv4 addresses of every IPVS reply (100,000 in a big
// dump), and dottedQuadValue reads those of every op of a batch; both must
// agree with ipaddr.js, which nobody here wrote: ipv4Text byte for byte,
// leaving nothing of one address in the next; dottedQuadValue on what it
// takes (ipaddr.js's strict four-part decimal) and on the value it reads.
import t from 'tap';
import ipaddr from 'ipaddr.js';

import { dottedQuadValue, ipv4Text, parseAddress, writeAddress } from '../../lib/util/address.js';

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

/** What ipaddr.js makes of `s`: its value as dottedQuadValue() returns it, or -1 where it is not a strict dotted quad. */
function referenceValue(s: string): number {
  if (!ipaddr.IPv4.isValidFourPartDecimal(s)) return -1;
  return ipaddr.IPv4.parse(s).toByteArray().reduce((v, b) => v * 256 + b, 0);
}

t.test('dottedQuadValue takes what ipaddr.js takes: every part at the edges of each rule, in every place', (t) => {
  // Empty, leading zeros, one to four digits, 255 and 256, and parts that
  // are not numbers; joined by dots three, four and five at a time.
  const parts = ['', '0', '00', '01', '1', '9', '10', '25', '99', '100', '199', '249', '250', '255', '256', '260', '300', '999', '1000', '0255', 'x', '1x'];
  let checked = 0;
  let accepted = 0;
  const visit = (s: string, count: number) => {
    if (count < 3) {
      for (const p of parts) visit(count === 0 ? p : `${s}.${p}`, count + 1);
      return;
    }
    const want = referenceValue(s);
    if (dottedQuadValue(s) !== want) t.fail(`${JSON.stringify(s)}: ${dottedQuadValue(s)}, ipaddr.js ${want}`);
    checked++;
    if (want >= 0) accepted++;
    if (count === 3) for (const p of parts) visit(`${s}.${p}`, 4);
    else if (count === 4 && want >= 0) visit(`${s}.1`, 5); // a fifth part after every dotted quad
  };
  visit('', 0);
  t.equal(accepted, 11 ** 4, `${checked} strings; the dotted quads are the 4-part joins of the 11 valid parts`);
  t.end();
});

t.test('dottedQuadValue on longer strings: random parts of 0 to 4 digits, 3 to 5 of them', (t) => {
  const digits = '0123456789';
  const pick = (s: string) => s[Math.floor(Math.random() * s.length)];
  let accepted = 0;
  for (let i = 0; i < 200_000; i++) {
    const parts: string[] = [];
    const count = 3 + Math.floor(Math.random() * 3);
    for (let p = 0; p < count; p++) {
      const length = Math.floor(Math.random() * 5);
      // Leading 1s and 2s often, so that many parts fall around 255.
      let part = length > 0 ? pick('12212') : '';
      for (let k = 1; k < length; k++) part += pick(digits);
      parts.push(part);
    }
    let s = parts.join(Math.random() < 0.02 ? ':' : '.');
    if (Math.random() < 0.02) s = ` ${s}`;
    const want = referenceValue(s);
    if (dottedQuadValue(s) !== want) t.fail(`${JSON.stringify(s)}: ${dottedQuadValue(s)}, ipaddr.js ${want}`);
    if (want >= 0) accepted++;
  }
  t.ok(accepted > 1000, `200,000 strings agree, ${accepted} of them dotted quads`);
  t.equal(dottedQuadValue('255.255.255.255'), 0xffffffff);
  t.equal(dottedQuadValue('0.0.0.0'), 0);
  t.end();
});

t.test("IPv4-compatible IPv6 (::a.b.c.d) is read as the kernel and inet_pton read it, not as ipaddr.js's IPv4-mapped", (t) => {
  const bytes = (text: string) => {
    const out = new Uint8Array(16);
    writeAddress(text, out, 0, 'op', 'address');
    return [...out];
  };
  const compatible = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1];
  t.same(bytes('::10.0.0.1'), compatible, '::10.0.0.1 is ::0:a00:1');
  t.same(bytes('::0:10.0.0.1'), compatible);
  t.same(bytes('::ffff:10.0.0.1'), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 0, 0, 1], 'the mapped one keeps its ffff');
  t.same(parseAddress('::10.0.0.1', 'a'), { family: 'inet6', text: '::a00:1' });
  t.equal(parseAddress('1::10.0.0.1', 'a').text, '1::a00:1', 'other embedded forms as before');
  t.end();
});
