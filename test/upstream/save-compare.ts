/**
 * The yardstick's comparison of two namespaces' `ipset save`: normalised
 * (initval, grown hash sizes, element order), remaining timeouts within a
 * slack, an element about to expire allowed to be gone on one side.
 */

/**
 * `ipset save` normalised: initval masked (each namespace's seed is
 * random), and with it the hash size a set grew to (growth depends on the
 * seed) unless `sizes`; each set's elements sorted (a list:set's order kept).
 */
export function normalSave(text: string, sizes: boolean): string[] {
  const creates: string[] = [];
  const adds = new Map<string, string[]>();
  const lists = new Set<string>();
  for (const l of text.split('\n')) {
    if (l.startsWith('create ')) {
      const c = l.replace(/ initval 0x\w+/, '');
      creates.push(sizes ? c : c.replace(/ hashsize \d+/, ' hashsize ~'));
      if (/^create \S+ list:set/.test(l)) lists.add(l.split(' ')[1]);
    } else if (l.startsWith('add ')) {
      const set = l.split(' ')[1];
      adds.set(set, [...(adds.get(set) ?? []), l]);
    }
  }
  const out = creates.sort();
  for (const [set, a] of [...adds].sort(([x], [y]) => (x < y ? -1 : 1))) out.push(...(lists.has(set) ? a : a.sort()));
  return out;
}

/** An element whose remaining timeout is 1 to `slack` seconds (0 is "never"). */
export function aboutToExpire(line: string, slack: number): boolean {
  const m = / timeout (\d+)/.exec(line);
  return m !== null && Number(m[1]) >= 1 && Number(m[1]) <= slack;
}

/**
 * Equal, remaining timeouts within `slack` seconds. The two namespaces act
 * a moment apart, so an element about to expire may already be gone in one
 * of them: such an element, present on one side only, is left out.
 */
export function sameSave(a: string[], b: string[], slack = 3): string | undefined {
  const key = (l: string) => l.replace(/ timeout \d+/, ' timeout ~');
  const keysA = new Set(a.map(key));
  const keysB = new Set(b.map(key));
  a = a.filter((l) => keysB.has(key(l)) || !aboutToExpire(l, slack));
  b = b.filter((l) => keysA.has(key(l)) || !aboutToExpire(l, slack));
  if (a.length !== b.length) {
    const onlyA = a.filter((l) => !keysB.has(key(l)));
    const onlyB = b.filter((l) => !keysA.has(key(l)));
    return `${a.length} lines against ${b.length}: the tool's only [${onlyA.slice(0, 3).join('; ')}], the library's only [${onlyB.slice(0, 3).join('; ')}]`;
  }
  for (let i = 0; i < a.length; i++) {
    if (key(a[i]) !== key(b[i])) return `${a[i]} / ${b[i]}`;
    const x = / timeout (\d+)/.exec(a[i]);
    const y = / timeout (\d+)/.exec(b[i]);
    if (x && y && Math.abs(Number(x[1]) - Number(y[1])) > slack) return `timeouts: ${a[i]} / ${b[i]}`;
  }
  return undefined;
}

