/**
 * Reading manifests document by document (lib/kubernetes/manifests.ts):
 * every file reads exactly as one parse of the whole file by the `yaml`
 * package does (the same objects, in the same order: two parsers that
 * agree), a YAML error is its own document's with its line in the file,
 * JSON is read by JSON.parse, and a document that did not change is not
 * parsed again.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { manifestFiles, parseManifestText, readDocuments, splitDocuments } from '../../lib/kubernetes/manifests.js';
import { scratchDir } from '../support/scratch.js';

const svc = (name: string, port = 80) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: ns}\nspec: {clusterIP: 10.96.0.1, ports: [{port: ${port}}]}\n`;

/** What one parse of the whole text gives: every document's value (or its first error), in order. */
function wholeParse(text: string): unknown[] {
  const docs = parseAllDocuments(text);
  return (Array.isArray(docs) ? docs : [docs]).map((d, i) => (d.errors.length ? `document ${i + 1}: ${d.errors[0].message}` : d.toJS())).filter((v) => v !== null && v !== undefined);
}

/** The same from parseManifestText: objects and error messages, in document order. */
function read(text: string): unknown[] {
  const r = parseManifestText('f.yaml', text);
  return [...r.objects.map((o) => o.object), ...r.errors.map((e) => e.problem)];
}

const cases: Array<[string, string]> = [
  ['one document', svc('a')],
  ['two documents', svc('a') + '---\n' + svc('b')],
  ['a leading marker and comments', '# objects\n\n---\n' + svc('a') + '---\n' + svc('b')],
  ['comments between documents and a trailing marker', svc('a') + '---\n# nothing here\n---\n' + svc('b') + '---\n'],
  ['document end markers', svc('a') + '...\n---\n' + svc('b') + '...\n'],
  ['CRLF line ends', (svc('a') + '---\n' + svc('b')).replace(/\n/g, '\r\n')],
  ['a flow mapping on the marker line', '--- {apiVersion: v1, kind: Service, metadata: {name: a}, spec: {clusterIP: 10.96.0.1}}\n---\n' + svc('b')],
  ['--- inside a block scalar, indented', svc('a').replace('metadata: {name: a, namespace: ns}', 'metadata:\n  name: a\n  namespace: ns\n  annotations:\n    note: |\n      ---\n      not a marker\n')],
  ['a JSON document between YAML ones', svc('a') + '---\n' + JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'j', namespace: 'ns' }, spec: { clusterIP: '10.96.0.2' } }) + '\n---\n' + svc('b')],
  ['a byte order mark', '\uFEFF' + svc('a') + '---\n' + svc('b')],
  ['directives: parsed whole', '%YAML 1.2\n---\n' + svc('a') + '---\n' + svc('b')],
];
for (const [name, text] of cases) {
  t.test(`reads like one parse of the whole file: ${name}`, async (t) => {
    const want = wholeParse(text);
    t.ok(want.length > 0);
    t.strictSame(read(text), want);
  });
}

t.test('a YAML error is its document\'s, with its line in the file; the other documents are read', async (t) => {
  const text = svc('a') + '---\nkind: Service\nmetadata: {name: [\n---\n' + svc('b') + '---\n' + svc('c') + 'spec:\n  x: 1\n';
  const r = parseManifestText('f.yaml', text);
  t.strictSame(r.objects.map((o) => o.object.metadata.name), ['a', 'b']);
  t.strictSame(
    r.errors.map((e) => e.problem),
    ['document 2: unexpected end of the stream within a flow collection at line 8, column 1', 'document 4: duplicated mapping key at line 18, column 1'],
    'each error names its document as the whole parse numbers it, and its line (the end of the unclosed list; the repeated key)',
  );
  t.strictSame(wholeParse(svc('a') + '---\n' + svc('b')), read(svc('a') + '---\n' + svc('b')), 'the good documents read as the whole parse reads them');
});

t.test('a YAML error in a file with directives: the file is read whole, and not at all', async (t) => {
  const r = parseManifestText('f.yaml', '%YAML 1.2\n---\n' + svc('a') + '---\nkind: [\n');
  t.strictSame(r.objects, []);
  t.match(r.errors.map((e) => e.problem), [/^unexpected end of the stream within a flow collection at line 9, column 1 \(this file is read in one parse, for its directives/]);
});

t.test('error lines count every line before the document, whatever the documents before it hold', async (t) => {
  const bad = 'kind: Service\nkind: Service\n';
  const r = parseManifestText('f.yaml', bad + '---\n' + bad + '---\n' + svc('a') + '---\n' + bad);
  t.strictSame(r.objects.map((o) => o.object.metadata.name), ['a']);
  t.strictSame(r.errors.map((e) => e.problem), [
    'document 1: duplicated mapping key at line 2, column 1',
    'document 2: duplicated mapping key at line 5, column 1',
    'document 4: duplicated mapping key at line 13, column 1',
  ], 'two identical documents in a row, and one after a good one');
});

t.test('a bad object names its document as the whole parse numbers it', async (t) => {
  const bad = 'apiVersion: v1\nkind: Service\nmetadata: {namespace: ns}\nspec: {ports: [{port: 99999}]}\n';
  const r = parseManifestText('f.yaml', '# header\n---\n' + svc('a') + '---\n---\n' + bad);
  t.match(r.errors, [{ object: 'Service (document 3)', field: 'metadata.name' }]);
});

t.test('digests: the same document text has the same digest wherever it sits; known documents are not parsed', async (t) => {
  const first = readDocuments('f.yaml', svc('a') + '---\n' + svc('b'));
  const second = readDocuments('f.yaml', svc('b') + '---\n' + svc('c', 81) + '---\n' + svc('a'));
  const digestOf = (reads: typeof first, name: string) => reads.find((d) => d.objects[0]?.object.metadata.name === name)?.digest;
  t.equal(digestOf(second, 'a'), digestOf(first, 'a'));
  t.equal(digestOf(second, 'b'), digestOf(first, 'b'));
  const known = new Set(first.map((d) => d.digest!));
  const third = readDocuments('f.yaml', svc('b') + '---\n' + svc('c', 81) + '---\n' + svc('a'), (d) => known.has(d));
  t.strictSame(third.map((d) => [d.known, d.objects.map((o) => o.object.metadata.name)]), [[true, []], [false, ['c']], [true, []]], 'only the new document is parsed');
});

t.test('splitDocuments: markers only at the start of a line, followed by a space, a line end or the end', async (t) => {
  t.strictSame(splitDocuments('a: 1\n---\nb: 2\n'), ['a: 1\n', 'b: 2\n']);
  t.strictSame(splitDocuments('---\na: 1\n'), ['a: 1\n']);
  t.strictSame(splitDocuments('a: ---\n---x: 1\n'), ['a: ---\n---x: 1\n']);
  t.strictSame(splitDocuments('a: 1\n--- |\n  text\n'), ['a: 1\n', ' |\n  text\n']);
  t.equal(splitDocuments('%YAML 1.2\n---\na: 1\n'), undefined);
});

t.test('a folder is read in natural name order, folders included; other files are left out', async (t) => {
  const dir = scratchDir('manifests-order-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, '2-more'));
  for (const f of ['10-b.yaml', '9-a.yml', 'Z.json', 'a.json', 'notes.txt', '2-more/1.yaml', '2-more/01-x.yaml']) writeFileSync(join(dir, f), svc('x'));
  t.strictSame(
    manifestFiles(dir).map((f) => relative(dir, f)),
    ['2-more/01-x.yaml', '2-more/1.yaml', '9-a.yml', '10-b.yaml', 'a.json', 'Z.json'],
  );
});
