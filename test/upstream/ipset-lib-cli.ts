/**
 * `ipset ARGS...` done with the library, as a program: what the yardstick
 * puts first on PATH in the library's namespace for their lines that call
 * ipset inside a shell construct (a loop, a subshell, `&&`), so the shell
 * runs the construct as written and every `ipset` in it is the library's.
 * It opens a handle in the namespace it runs in, runs one command through
 * ipset-cli.ts (restore reads stdin), prints what list and save read in
 * `ipset save` form, and exits as the tool would (0 or 1).
 */
import { readFileSync } from 'node:fs';

import { Ipset } from '../../lib/ipset/index.js';
import { execute, parse, saveText } from './ipset-cli.js';

const p = parse(process.argv.slice(2));
if ('error' in p) {
  process.stderr.write(`ipset (library): ${p.error}\n`);
  process.exit(1);
}
const ipset = await Ipset.open();
try {
  const input = p.cmd === 'restore' ? readFileSync(typeof p.env.file === 'string' ? p.env.file : 0, 'utf8') : undefined;
  const r = await execute(ipset, p, input);
  if (r.listed) for (const [name, s] of r.listed) process.stdout.write(saveText(name, s));
  if (r.error) process.stderr.write(`ipset (library): ${r.error}\n`);
  process.exitCode = r.code;
} finally {
  ipset.close();
}
