// The declarations a strict TypeScript user gets for the IPVS, rtnetlink,
// netlink and checking modules, as built into dist/ (the build step runs
// before the unit tests):
//  - test/types/ipvs-rtnl-consumer.ts compiles under strict +
//    exactOptionalPropertyTypes without skipLibCheck, so every .d.ts it
//    reaches is checked, and what each read returns goes back into the
//    matching write;
//  - the same compile fails once a declaration is broken (so this test can
//    fail);
//  - every exported declaration, and every public member and field of the
//    exported classes, interfaces and types, has a doc comment.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = path.join(root, 'dist/lib');
const configPath = path.join(root, 'test/types/tsconfig.ipvs-rtnl.json');

function load(): ts.ParsedCommandLine {
  const read = ts.readConfigFile(configPath, ts.sys.readFile);
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  return ts.parseJsonConfigFileContent(read.config, ts.sys, path.dirname(configPath));
}

function report(diagnostics: readonly ts.Diagnostic[]): string[] {
  return diagnostics.map((d) => {
    const where = d.file && d.start !== undefined ? `${path.relative(root, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : '';
    return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
  });
}

const config = load();
const program = ts.createProgram(config.fileNames, config.options);

t.test('the consumer compiles, the built declarations included', (t) => {
  t.equal(config.options.skipLibCheck, false, 'without skipLibCheck');
  t.equal(config.options.exactOptionalPropertyTypes, true, 'with exactOptionalPropertyTypes');
  t.equal(config.options.strict, true, 'strict');
  const files = program.getSourceFiles().map((f) => path.relative(root, f.fileName));
  for (const m of ['ipvs/types.d.ts', 'ipvs/client.d.ts', 'rtnl/client.d.ts', 'netlink/errors.d.ts', 'netlink/binding.d.ts', 'util/check.d.ts', 'util/address.d.ts'])
    t.ok(files.includes(`dist/lib/${m}`), `dist/lib/${m} is part of the compile`);
  t.same(report(ts.getPreEmitDiagnostics(program)), [], 'no diagnostics');
  t.end();
});

t.test('a declaration that breaks under exactOptionalPropertyTypes fails the compile', (t) => {
  const target = path.join(dist, 'ipvs/types.d.ts');
  const host = ts.createCompilerHost(config.options);
  const getSourceFile = host.getSourceFile.bind(host);
  // A class that says it is a DumpOptions but may hold undefined where the
  // interface leaves the field out: what exactOptionalPropertyTypes refuses
  // in a declaration, and skipLibCheck would hide.
  host.getSourceFile = (name, version, onError, create) =>
    path.resolve(name) === target
      ? ts.createSourceFile(name, readFileSync(target, 'utf8') + '\nexport declare class Broken implements DumpOptions { stats: boolean | undefined; }\n', version)
      : getSourceFile(name, version, onError, create);
  const broken = ts.createProgram(config.fileNames, config.options, host, program);
  const found = report(ts.getPreEmitDiagnostics(broken));
  t.ok(found.some((d) => d.startsWith('dist/lib/ipvs/types.d.ts')), `the broken declaration is reported (${found[0] ?? 'nothing'})`);
  t.end();
});

t.test('every exported declaration and every public member has a doc comment', (t) => {
  const checker = program.getTypeChecker();
  const entries = ['ipvs/index.d.ts', 'rtnl/index.d.ts', 'netlink/errors.d.ts', 'util/check.d.ts', 'util/address.d.ts'];
  const missing: string[] = [];
  const seen = new Set<ts.Symbol>();
  const ours = (d: ts.Declaration) => path.resolve(d.getSourceFile().fileName).startsWith(dist + path.sep);
  const documented = (s: ts.Symbol) => s.getDocumentationComment(checker).some((p) => p.text.trim() !== '');
  const hidden = (d: ts.Declaration) => (ts.getCombinedModifierFlags(d) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !== 0;

  function members(owner: string, type: ts.Type): void {
    const parts = type.isUnion() ? type.types : [type];
    for (const part of parts) {
      for (const p of checker.getPropertiesOfType(part)) {
        const decls = (p.declarations ?? []).filter(ours);
        if (decls.length === 0 || decls.some(hidden) || p.name === 'prototype' || seen.has(p)) continue;
        seen.add(p);
        if (!documented(p)) missing.push(`${owner}.${p.name}`);
      }
    }
  }

  for (const entry of entries) {
    const file = program.getSourceFile(path.join(dist, entry));
    if (!file) {
      missing.push(`${entry}: not in the program`);
      continue;
    }
    const module = checker.getSymbolAtLocation(file);
    for (const exported of module ? checker.getExportsOfModule(module) : []) {
      const s = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (seen.has(s)) continue;
      seen.add(s);
      if (!documented(s)) missing.push(s.name);
      if (s.flags & ts.SymbolFlags.Class) {
        members(s.name, checker.getDeclaredTypeOfSymbol(s));
        const decl = s.valueDeclaration;
        if (decl) members(s.name, checker.getTypeOfSymbolAtLocation(s, decl)); // statics
      } else if (s.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) {
        const type = checker.getDeclaredTypeOfSymbol(s);
        if (!(s.flags & ts.SymbolFlags.TypeAlias) || !(type.flags & ts.TypeFlags.Conditional)) members(s.name, type);
      }
    }
  }
  t.same(missing, [], 'nothing undocumented');
  t.end();
});
