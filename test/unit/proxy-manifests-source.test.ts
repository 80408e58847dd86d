/**
 * The manifests source: the initial load, then per-object add/update/delete
 * events for file edits (debounced; by inotify or by the mtime poll), a
 * broken edit ignored, and a bad first load refused.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import t from 'tap';
import { ManifestsSource } from '../../lib/proxy/sources/manifests-source.js';
import { eventLabel, type SourceEvent } from '../../lib/proxy/sources/source.js';

const logger = pino({ level: 'silent' });
const svc = (name: string, port = 80) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: ns}\nspec: {clusterIP: 10.96.0.${name.length}, ports: [{port: ${port}}]}\n`;

async function start(t: Tap.Test, dir: string, pollMs = 50) {
  const events: string[] = [];
  let synced = 0;
  const source = new ManifestsSource({ path: dir, logger, debounceMs: 30, pollMs });
  t.teardown(() => source.stop());
  await source.start({ event: (e: SourceEvent) => events.push(`${e.type} ${eventLabel(e)}`), synced: () => synced++ });
  return { events, synced: () => synced };
}

async function until(fn: () => boolean, ms = 3000) {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(10);
  }
}

t.test('initial load, then add, update, delete per object', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kp-src-'));
  writeFileSync(join(dir, 'a.yaml'), svc('a') + '---\n' + svc('bb'));
  const s = await start(t, dir);
  t.same(s.events, ['add Service ns/a', 'add Service ns/bb']);
  t.equal(s.synced(), 1);
  s.events.length = 0;
  writeFileSync(join(dir, 'a.yaml'), svc('a', 81) + '---\n' + svc('bb'));
  writeFileSync(join(dir, 'c.yml'), svc('ccc'));
  await until(() => s.events.length >= 2);
  await sleep(100);
  t.same(s.events.sort(), ['add Service ns/ccc', 'update Service ns/a'], 'only what changed, one reload for both edits');
  s.events.length = 0;
  rmSync(join(dir, 'c.yml'));
  await until(() => s.events.length >= 1);
  t.same(s.events, ['delete Service ns/ccc']);
  s.events.length = 0;
  // An editor's save: write elsewhere, rename over.
  writeFileSync(join(dir, '.tmp'), svc('a', 82));
  renameSync(join(dir, '.tmp'), join(dir, 'a.yaml'));
  await until(() => s.events.length >= 2);
  t.same(s.events.sort(), ['delete Service ns/bb', 'update Service ns/a']);
});

t.test('polling alone notices edits (no inotify, e.g. edits from outside a UML guest)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kp-src-'));
  const file = join(dir, 'one.yaml');
  writeFileSync(file, svc('a'));
  // A single file is watched through its folder; the poll is what matters here.
  const s = await start(t, file, 30);
  s.events.length = 0;
  writeFileSync(file, svc('a', 90));
  await until(() => s.events.length >= 1);
  t.same(s.events, ['update Service ns/a']);
});

t.test('a broken edit is ignored; fixing it applies the difference from the last good state', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kp-src-'));
  writeFileSync(join(dir, 'a.yaml'), svc('a'));
  const s = await start(t, dir);
  s.events.length = 0;
  writeFileSync(join(dir, 'a.yaml'), 'kind: Service\nmetadata: {name: [');
  await sleep(200);
  t.same(s.events, [], 'nothing deleted');
  writeFileSync(join(dir, 'a.yaml'), svc('a', 8080));
  await until(() => s.events.length >= 1);
  t.same(s.events, ['update Service ns/a']);
});

t.test('a first load that fails refuses to start, naming the file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kp-src-'));
  writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: 99999}]}\n');
  const source = new ManifestsSource({ path: dir, logger });
  await t.rejects(source.start({ event: () => {}, synced: () => {} }), /bad\.yaml: Service default\/x/);
  await source.stop();
  const missing = new ManifestsSource({ path: join(dir, 'nope'), logger });
  await t.rejects(missing.start({ event: () => {}, synced: () => {} }), /ENOENT/);
  await missing.stop();
});
