/**
 * naturalCompare against ICU's root collation with numeric ordering, the
 * order it stands in for: wherever ICU tells two ASCII strings apart, both
 * put them the same way round.
 */
import t from 'tap';
import { naturalCompare } from '../../lib/util/natural-order.js';
import { prng } from '../support/prng.js';

const icu = new Intl.Collator('en', { numeric: true });
const sign = (n: number) => Math.sign(n);

t.test('the orders people expect', (t) => {
  const sorted = (xs: string[]) => [...xs].sort(naturalCompare);
  t.strictSame(sorted(['10.0.0.10', '10.0.0.9', '10.0.0.100', '9.255.255.255']), ['9.255.255.255', '10.0.0.9', '10.0.0.10', '10.0.0.100']);
  t.strictSame(sorted(['fd00::10', 'fd00::9', 'fd00:1::', 'fd00::a']), ['fd00::9', 'fd00::10', 'fd00::a', 'fd00:1::'], "':' before digits before letters");
  t.strictSame(sorted(['web-10', 'web-2', 'Web-3', 'api']), ['api', 'web-2', 'Web-3', 'web-10'], 'case does not lead');
  t.strictSame(sorted(['a', 'A', 'b']), ['a', 'A', 'b'], 'lower case first between equals');
  t.strictSame(sorted(['KUBE-NODE-PORT-TCP', 'KUBE-CLUSTER-IP', 'KUBE-LOOP-BACK']), ['KUBE-CLUSTER-IP', 'KUBE-LOOP-BACK', 'KUBE-NODE-PORT-TCP']);
  t.strictSame(sorted(['x1', 'x-1', 'x 1', 'x']), ['x', 'x 1', 'x-1', 'x1'], 'shorter first; punctuation before digits');
  t.equal(naturalCompare('same', 'same'), 0);
  t.end();
});

t.test('every pair of printable ASCII characters, and digit runs, as ICU orders them', (t) => {
  let disagreements = 0;
  for (let x = 0x20; x < 0x7f; x++) {
    for (let y = 0x20; y < 0x7f; y++) {
      const [a, b] = [String.fromCharCode(x), String.fromCharCode(y)];
      const want = sign(icu.compare(a, b));
      if (want !== 0 && sign(naturalCompare(a, b)) !== want) disagreements++;
    }
  }
  t.equal(disagreements, 0, 'single characters');
  for (const [a, b] of [['9', '10'], ['1.5', '1.10'], ['a99b', 'a100a'], ['007', '8'], ['a0', 'a'], ['0', '00a']]) {
    t.equal(sign(naturalCompare(a, b)), sign(icu.compare(a, b)), `${a} vs ${b}`);
  }
  t.end();
});

t.test('random ASCII strings: the same order as ICU wherever ICU tells them apart', (t) => {
  const alphabet = 'abcAB019.:-_/ ';
  const next = prng(0x5eed);
  const word = () => {
    let s = '';
    const n = Math.floor(next() * 9);
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(next() * alphabet.length)];
    return s;
  };
  const failures: string[] = [];
  for (let k = 0; k < 50_000 && failures.length < 5; k++) {
    const [a, b] = [word(), word()];
    const want = sign(icu.compare(a, b));
    const got = sign(naturalCompare(a, b));
    if (want !== 0 && got !== want) failures.push(`${JSON.stringify(a)} vs ${JSON.stringify(b)}: ICU ${want}, ours ${got}`);
    if (a !== b && got === 0) failures.push(`${JSON.stringify(a)} and ${JSON.stringify(b)} compare equal`);
    if (sign(naturalCompare(b, a)) !== -got) failures.push(`${JSON.stringify(a)} vs ${JSON.stringify(b)}: not antisymmetric`);
  }
  t.strictSame(failures, []);
  t.end();
});

t.test('a total order: any input order sorts the same, each element after the ones before it', (t) => {
  const next = prng(42);
  const items = Array.from({ length: 2000 }, () => {
    const pick = next();
    if (pick < 0.4) return `10.${Math.floor(next() * 3)}.${Math.floor(next() * 300)}.${Math.floor(next() * 12)}`;
    if (pick < 0.7) return `svc-${Math.floor(next() * 40)}${next() < 0.2 ? '-0' + Math.floor(next() * 9) : ''}`;
    return `fd00::${Math.floor(next() * 4096).toString(16)}`;
  });
  const once = [...items].sort(naturalCompare);
  const reversed = [...items].reverse().sort(naturalCompare);
  t.strictSame(reversed, once);
  let outOfOrder = 0;
  for (let i = 0; i < once.length; i++) for (let j = i + 1; j < once.length; j += 97) if (naturalCompare(once[i], once[j]) > 0) outOfOrder++;
  t.equal(outOfOrder, 0);
  t.end();
});
