/**
 * A changed --config file ends the proxy, also when it comes from a
 * ConfigMap volume: there the kubelet writes a new timestamped folder and
 * swaps the `..data` symlink, which kube-proxy's watch on the file itself
 * never notices (the upstream bug fixed here). Unchanged content, or other
 * files in the folder, change nothing.
 */
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { CONFIG_CHANGED, watchConfigFile } from '../../lib/proxy/config-watch.js';
import { scratchDir } from '../support/scratch.js';

/** Waits (bounded: a slow machine may take seconds) for the callback; resolves with the reasons seen. */
async function reasonsAfter(action: () => void, reasons: string[], waitMs = 10_000): Promise<string[]> {
  action();
  const end = Date.now() + waitMs;
  while (reasons.length === 0 && Date.now() < end) await sleep(20);
  return reasons;
}

t.test('a ConfigMap update (the ..data symlink swapped) is noticed', async (t) => {
  const dir = scratchDir('kp-cm-');
  mkdirSync(join(dir, '..2026_01'));
  writeFileSync(join(dir, '..2026_01', 'config.conf'), 'mode: ipvs\n');
  symlinkSync('..2026_01', join(dir, '..data'));
  symlinkSync('..data/config.conf', join(dir, 'config.conf'));
  const reasons: string[] = [];
  const w = watchConfigFile(join(dir, 'config.conf'), (r) => reasons.push(r));
  t.teardown(() => w.close());
  // The kubelet's atomic writer: a new folder, a temporary symlink, renamed over ..data.
  const seen = await reasonsAfter(() => {
    mkdirSync(join(dir, '..2026_02'));
    writeFileSync(join(dir, '..2026_02', 'config.conf'), 'mode: ipvs\nclusterCIDR: 10.244.0.0/16\n');
    symlinkSync('..2026_02', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  }, reasons);
  t.same(seen, [CONFIG_CHANGED], "upstream's message, once");
});

t.test('an in-place write is noticed; the same content or another file is not', async (t) => {
  const dir = scratchDir('kp-cf-');
  const file = join(dir, 'config.conf');
  writeFileSync(file, 'a\n');
  const reasons: string[] = [];
  const w = watchConfigFile(file, (r) => reasons.push(r));
  t.teardown(() => w.close());
  t.same(await reasonsAfter(() => writeFileSync(file, 'a\n'), reasons, 500), [], 'rewritten with the same bytes: nothing');
  t.same(await reasonsAfter(() => writeFileSync(join(dir, 'other'), 'x'), reasons, 500), [], 'another file: nothing');
  t.same(await reasonsAfter(() => writeFileSync(file, 'b\n'), reasons), [CONFIG_CHANGED], 'new content: noticed');
});
