/**
 * The API reference (typedoc, typedoc.json: `npm run docs`) builds from the
 * library's entry points with no warning: every export and member is
 * documented, no export leans on a type the package does not export, no
 * link dangles. A warning is a failure that names the member.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { repo, work } from './support/env.js';

t.test('typedoc: the reference builds with no warning', async (t) => {
  const out = path.join(work, 'api');
  const r = spawnSync(process.execPath, [path.join(repo, 'node_modules/typedoc/bin/typedoc'), '--out', out], { cwd: repo, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
  const warnings = `${r.stdout}\n${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '').split('\n').filter((l) => /^\[(warning|error)\]/.test(l) && !/Found \d+ errors? and \d+ warnings?/.test(l));
  t.same(warnings, [], `${warnings.length} warnings: each export and member documented, nothing referenced that is not exported`);
  t.equal(r.status, 0, 'typedoc exits 0 (warnings are errors in typedoc.json)');
  t.ok(existsSync(path.join(out, 'index.html')), 'and writes the reference');
});
