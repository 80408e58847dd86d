/**
 * The manifests source: the initial load, then per-object add/update/delete
 * events for file edits (debounced; by inotify or by the mtime poll), and
 * bad input handled per object: an invalid object skipped, an invalid edit
 * keeping the last good version, an unreadable file deleting nothing, each
 * logged and reported while the other objects go through.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { ManifestsSource } from '../../lib/proxy/sources/manifests-source.js';
import { eventLabel, type RejectedObject, type SourceEvent } from '../../lib/proxy/sources/source.js';
import { scratchDir } from '../support/scratch.js';

const logger = pino({ level: 'silent' });
const svc = (name: string, port = 80) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: ns}\nspec: {clusterIP: 10.96.0.${name.length}, ports: [{port: ${port}}]}\n`;

async function start(t: Test, dir: string, pollMs = 50) {
  const events: string[] = [];
  const objects = new Map<string, SourceEvent['object']>();
  const rejected: RejectedObject[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const deletes: SourceEvent[] = [];
  let synced = 0;
  const capture = pino({ level: 'warn' }, { write: (l: string) => logs.push(JSON.parse(l)) });
  const source = new ManifestsSource({ path: dir, logger: capture, debounceMs: 30, pollMs });
  t.teardown(() => source.stop());
  await source.start({
    event: (e: SourceEvent) => {
      events.push(`${e.type} ${eventLabel(e)}`);
      if (e.type === 'delete') {
        objects.delete(eventLabel(e));
        deletes.push(e);
      }
      else objects.set(eventLabel(e), e.object);
    },
    synced: () => synced++,
    rejected: (r) => rejected.push(r),
  });
  return { events, objects, rejected, logs, deletes, synced: () => synced };
}

async function until(fn: () => boolean, ms = 10_000) {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(10);
  }
}

t.test('initial load, then add, update, delete per object', async (t) => {
  const dir = scratchDir('kp-src-');
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

t.test('a file emptied in place deletes what it held (an empty file is no object, not a half-written one)', async (t) => {
  const dir = scratchDir('kp-src-');
  writeFileSync(join(dir, 'web.yaml'), svc('web'));
  writeFileSync(join(dir, 'other.yaml'), svc('other'));
  const s = await start(t, dir);
  s.events.length = 0;
  writeFileSync(join(dir, 'web.yaml'), '');
  await until(() => s.events.length >= 1);
  await sleep(100);
  t.same(s.events, ['delete Service ns/web']);
  t.same(s.rejected, [], 'nothing reported');
});

t.test('polling alone notices edits (no inotify, e.g. edits from outside a UML guest)', async (t) => {
  const dir = scratchDir('kp-src-');
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
  const dir = scratchDir('kp-src-');
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

const badPort = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: ns}\nspec: {clusterIP: 10.96.0.9, ports: [{port: 99999}]}\n`;

t.test('a bad object at start is skipped and reported; the others are delivered', async (t) => {
  const dir = scratchDir('kp-src-');
  writeFileSync(join(dir, 'a.yaml'), svc('a') + '---\n' + badPort('x') + '---\n' + svc('bb'));
  writeFileSync(join(dir, 'z.yaml'), svc('ccc'));
  const s = await start(t, dir);
  t.same(s.events, ['add Service ns/a', 'add Service ns/bb', 'add Service ns/ccc'], 'every good object, before and after the bad one, and in other files');
  t.equal(s.synced(), 1);
  t.same(s.rejected, [{ kind: 'Service', object: 'Service ns/x', field: 'spec.ports[0].port', problem: 'spec.ports[0].port must be an integer from 1 to 65535, got 99999', action: 'skipped' }]);
  t.match(s.logs, [{ level: 40, file: join(dir, 'a.yaml'), object: 'Service ns/x', field: 'spec.ports[0].port', action: 'skipped' }], 'one structured warning naming file, object and field');
  const missing = new ManifestsSource({ path: join(dir, 'nope'), logger });
  await t.rejects(missing.start({ event: () => {}, synced: () => {} }), /ENOENT/, 'a path that does not exist still fails start-up');
  await missing.stop();
});

t.test('a bad edit keeps the last good version of that object; good edits in the same reload apply', async (t) => {
  const dir = scratchDir('kp-src-');
  writeFileSync(join(dir, 'a.yaml'), svc('a') + '---\n' + svc('bb'));
  const s = await start(t, dir);
  s.events.length = 0;
  // One reload: a broken, a changed and a new object in the same file.
  writeFileSync(join(dir, 'a.yaml'), badPort('a') + '---\n' + svc('bb', 8443) + '---\n' + svc('new'));
  await until(() => s.events.length >= 2);
  await sleep(100);
  t.same(s.events.sort(), ['add Service ns/new', 'update Service ns/bb'], 'no event for the broken one: neither update nor delete');
  t.same((s.objects.get('Service ns/a') as { spec: { ports: Array<{ port: number }> } }).spec.ports[0].port, 80, 'ns/a stays at its last good version');
  t.match(s.rejected, [{ object: 'Service ns/a', field: 'spec.ports[0].port', action: 'kept-last-good' }]);
  t.match(s.logs.at(-1), { object: 'Service ns/a', action: 'kept-last-good', msg: /last good version/ });
  // Removing the broken object deletes it; fixing it instead would update it.
  s.events.length = 0;
  writeFileSync(join(dir, 'a.yaml'), svc('bb', 8443) + '---\n' + svc('new'));
  await until(() => s.events.length >= 1);
  t.same(s.events, ['delete Service ns/a']);
});

t.test('an unreadable document deletes nothing from its file; other files still apply', async (t) => {
  const dir = scratchDir('kp-src-');
  writeFileSync(join(dir, 'a.yaml'), svc('a') + '---\n' + svc('bb'));
  writeFileSync(join(dir, 'c.yaml'), svc('ccc'));
  const s = await start(t, dir);
  s.events.length = 0;
  // A half-written a.yaml (a YAML error in its second document) and a real edit of c.yaml.
  writeFileSync(join(dir, 'a.yaml'), svc('a', 81) + '---\nkind: Service\nmetadata: {name: [\n');
  writeFileSync(join(dir, 'c.yaml'), svc('ccc', 9090));
  await until(() => s.events.includes('update Service ns/ccc'));
  await sleep(100);
  t.same(s.events.sort(), ['update Service ns/a', 'update Service ns/ccc'], 'what could be read applies; bb, hidden by the broken document, is not deleted');
  t.ok(s.objects.has('Service ns/bb'));
  t.match(s.rejected, [{ kind: 'document', object: '(unparsable document)', action: 'kept-last-good', problem: /^document 2: / }]);
  t.match(s.logs.at(-1), { level: 40, file: join(dir, 'a.yaml') });
  s.events.length = 0;
  writeFileSync(join(dir, 'a.yaml'), svc('a', 81));
  await until(() => s.events.length >= 1);
  t.same(s.events, ['delete Service ns/bb'], 'once the file reads cleanly, what it no longer holds is deleted');
});

const sliceOf = (svcName: string, ip: string) =>
  `apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: ${svcName}-x, namespace: ns, labels: {kubernetes.io/service-name: ${svcName}}}\naddressType: IPv4\nports: [{port: 8080}]\nendpoints:\n- addresses: [${ip}]\n`;

t.test('a reload parses only the files that changed; a file touched but not changed is not parsed', async (t) => {
  const dir = scratchDir('kp-src-');
  for (let f = 0; f < 20; f++) writeFileSync(join(dir, `f${String(f).padStart(2, '0')}.yaml`), svc(`s${f}a`) + '---\n' + svc(`s${f}b`));
  const infos: Array<Record<string, unknown>> = [];
  const source = new ManifestsSource({ path: dir, logger: pino({ level: 'info' }, { write: (l: string) => infos.push(JSON.parse(l)) }), debounceMs: 30, pollMs: 50 });
  t.teardown(() => source.stop());
  const events: string[] = [];
  await source.start({ event: (e) => events.push(`${e.type} ${eventLabel(e)}`), synced: () => {} });
  t.equal(events.length, 40);
  events.length = 0;
  writeFileSync(join(dir, 'f07.yaml'), svc('s7a', 81) + '---\n' + svc('s7b'));
  await until(() => infos.some((l) => l.msg === 'manifests reloaded'));
  t.same(events, ['update Service ns/s7a'], 'only the changed object of the changed file');
  t.match(infos.find((l) => l.msg === 'manifests reloaded'), { changes: 1, filesParsed: 1 }, 'one file parsed of 20');
  infos.length = 0;
  events.length = 0;
  // Same content, new mtime (touch, or an editor saving without a change).
  await sleep(20);
  writeFileSync(join(dir, 'f03.yaml'), svc('s3a') + '---\n' + svc('s3b'));
  await until(() => infos.some((l) => l.msg === 'manifests reloaded'));
  t.same(events, []);
  t.match(infos.find((l) => l.msg === 'manifests reloaded'), { changes: 0, filesParsed: 0 }, 'read and found unchanged: not parsed');
});

t.test('JSON files are read with JSON.parse: the same objects as from YAML; broken JSON gets the YAML parser\'s message', async (t) => {
  const dir = scratchDir('kp-src-');
  const asJson = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'j', namespace: 'ns' }, spec: { clusterIP: '10.96.0.1', ports: [{ port: 80 }] } };
  writeFileSync(join(dir, 'a.json'), JSON.stringify(asJson));
  writeFileSync(join(dir, 'b.yaml'), svc('y'));
  writeFileSync(join(dir, 'c.json'), JSON.stringify({ kind: 'List', items: [{ ...asJson, metadata: { name: 'k', namespace: 'ns' } }] }, null, 2));
  const s = await start(t, dir);
  t.same(s.events, ['add Service ns/j', 'add Service ns/y', 'add Service ns/k']);
  t.same(s.objects.get('Service ns/j'), asJson, 'the object as written');
  s.events.length = 0;
  writeFileSync(join(dir, 'c.json'), '{"kind": "List", "items": [');
  await until(() => s.rejected.length >= 1);
  t.match(s.rejected, [{ kind: 'document', object: '(unparsable document)', problem: /^document 1: /, action: 'kept-last-good' }]);
  t.same(s.events, [], 'the objects of the broken file stay');
});

t.test('a delete carries the identity the proxy needs; a duplicate in an unchanged file takes over when the winning copy goes', async (t) => {
  const dir = scratchDir('kp-src-');
  writeFileSync(join(dir, 'a.yaml'), svc('dup', 80));
  writeFileSync(join(dir, 'b.yaml'), svc('dup', 90) + '---\n' + sliceOf('web', '10.0.0.1'));
  const s = await start(t, dir);
  t.same(s.events, ['add Service ns/dup', 'add EndpointSlice ns/web-x']);
  t.equal((s.objects.get('Service ns/dup') as { spec: { ports: Array<{ port: number }> } }).spec.ports[0].port, 90, 'the later file wins');
  s.events.length = 0;
  writeFileSync(join(dir, 'b.yaml'), svc('other'));
  await until(() => s.events.length >= 3);
  t.same(s.events.sort(), ['add Service ns/other', 'delete EndpointSlice ns/web-x', 'update Service ns/dup']);
  t.equal((s.objects.get('Service ns/dup') as { spec: { ports: Array<{ port: number }> } }).spec.ports[0].port, 80, 'a.yaml, not parsed again by the change, delivers its copy');
  t.match(s.deletes, [{ kind: 'EndpointSlice', object: { metadata: { name: 'web-x', namespace: 'ns', labels: { 'kubernetes.io/service-name': 'web' } } } }], 'the deleted slice names its Service');
});
