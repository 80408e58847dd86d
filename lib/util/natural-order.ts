/**
 * The order people read lists of addresses, names and keys in: runs of
 * digits by their value ("10.0.0.9" before "10.0.0.10"), letters without
 * regard to case first, punctuation before digits before letters. For ASCII
 * text it is the order of ICU's root collation with numeric ordering
 * (`new Intl.Collator('en', { numeric: true })`), which is what the library
 * used before; test/unit/natural-order.test.ts holds the two side by side.
 *
 * Written out rather than asking ICU because the proxy sorts every
 * destination, set entry and key of a cluster with it: a collator costs
 * about 3 MiB of ICU data resident for the life of the process, and each
 * comparison is a call into ICU, taking about half as long again as this.
 *
 * Where ICU calls two strings equal (digit runs that differ only in leading
 * zeros, "web-01" and "web-1"), this breaks the tie by code units, so that
 * distinct strings never compare equal and a sort's result does not depend
 * on its input order. Beyond ASCII, characters follow their code units,
 * after every ASCII character.
 */

const DIGIT_RANK = 40;
const LETTER_RANK = 50;
const OTHER_RANK = 100;

/**
 * Primary weight of each ASCII character: control characters 0, the
 * punctuation in ICU's root order (space, then `_-,;:!?.'"()[]{}@*\/&#%`^+<=>|~$`),
 * digits one weight (their runs are compared by value), letters by the
 * letter, whatever the case.
 */
const RANK = new Uint8Array(128);
{
  const punctuation = ' _-,;:!?.\'"()[]{}@*/\\&#%`^+<=>|~$';
  for (let i = 0; i < punctuation.length; i++) RANK[punctuation.charCodeAt(i)] = 1 + i;
  for (let c = 0x30; c <= 0x39; c++) RANK[c] = DIGIT_RANK;
  for (let k = 0; k < 26; k++) RANK[0x41 + k] = RANK[0x61 + k] = LETTER_RANK + k;
}

const rank = (c: number): number => (c < 128 ? RANK[c] : OTHER_RANK);
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** Negative, zero or positive as `a` sorts before, with or after `b`; zero only for equal strings. */
export function naturalCompare(a: string, b: string): number {
  if (a === b) return 0;
  return primary(a, b) || caseOrCodeUnits(a, b);
}

/** The comparison ignoring case and leading zeros. */
function primary(a: string, b: string): number {
  const n = a.length;
  const m = b.length;
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    const c = a.charCodeAt(i);
    const d = b.charCodeAt(j);
    if (isDigit(c) && isDigit(d)) {
      // Two runs of digits: by value, i.e. by significant length, then digit by digit.
      while (i < n && a.charCodeAt(i) === 0x30) i++;
      while (j < m && b.charCodeAt(j) === 0x30) j++;
      let ei = i;
      while (ei < n && isDigit(a.charCodeAt(ei))) ei++;
      let ej = j;
      while (ej < m && isDigit(b.charCodeAt(ej))) ej++;
      if (ei - i !== ej - j) return ei - i - (ej - j);
      for (; i < ei; i++, j++) {
        const diff = a.charCodeAt(i) - b.charCodeAt(j);
        if (diff !== 0) return diff;
      }
      continue;
    }
    const rc = rank(c);
    const rd = rank(d);
    if (rc !== rd) return rc - rd;
    if (rc === OTHER_RANK && c !== d) return c - d;
    i++;
    j++;
  }
  return n - i - (m - j);
}

/** Strings equal but for case or leading zeros: the first case difference, lower case first; else by code units. */
function caseOrCodeUnits(a: string, b: string): number {
  if (a.length === b.length) {
    for (let i = 0; i < a.length; i++) {
      const c = a.charCodeAt(i);
      const d = b.charCodeAt(i);
      if (c !== d) {
        if ((c | 0x20) === (d | 0x20) && rank(c) >= LETTER_RANK && rank(c) < OTHER_RANK) return (d & 0x20) - (c & 0x20);
        break;
      }
    }
  }
  return a < b ? -1 : 1;
}
