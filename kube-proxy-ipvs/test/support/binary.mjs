/**
 * Where the built kube-proxy-ipvs binary is and the node flags its first
 * line gives (`#!/usr/bin/env -S node FLAGS`: its young-generation size,
 * which the proxy's memory depends on). The kernel tests and the controller
 * benchmarks start it with these, as it runs installed; under a bare node
 * they would measure another heap. Plain JavaScript so the benchmarks can
 * load it without a TypeScript loader.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const MAIN = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

/** The flags of MAIN's interpreter line. */
export const BINARY_NODE_FLAGS = interpreterFlags(MAIN);

function interpreterFlags(script) {
  const first = readFileSync(script, 'utf8').split('\n', 1)[0];
  const m = /^#!\/usr\/bin\/env -S node((?: --[\w-]+(?:=\S+)?)*)$/.exec(first);
  if (m === null) throw new Error(`${script}: the first line is not "#!/usr/bin/env -S node [--flag...]": ${first}`);
  return m[1].split(' ').filter(Boolean);
}
