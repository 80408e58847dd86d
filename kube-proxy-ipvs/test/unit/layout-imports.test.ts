/**
 * The pipeline's import rule, read from every file's imports (parsed with
 * the TypeScript compiler, so `import type` and `import()` are told apart
 * from value imports):
 *
 *   kubernetes/ → desired/ → plan/ → kernel/ → proxy/ → cli/
 *
 * with logging/ (kube-proxy's log lines and verbosities) beneath them all:
 * every stage may log through it, and it imports none of them.
 *
 * - logging/, kubernetes/, desired/ and plan/ (no kernel behind them) import nothing
 *   from kernel/, proxy/ or cli/, and of the library only types from
 *   'ipvs-netlink' and values from 'ipvs-netlink/address' (which loads no
 *   addon);
 * - kernel/ imports nothing from proxy/ or cli/; proxy/ nothing from cli/;
 * - nothing reaches into the library by path: only its public entry points
 *   'ipvs-netlink' and 'ipvs-netlink/address';
 * - every file is in one of the stages;
 * - node:http and prom-client are taken as values from one module each
 *   (proxy/node-http.ts, proxy/prom-client-parts.ts), which load them
 *   without what the proxy never runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import ts from 'typescript';

const LIB = fileURLToPath(new URL('../../lib', import.meta.url));
const STAGES = ['logging', 'kubernetes', 'desired', 'plan', 'kernel', 'proxy', 'cli'] as const;
type Stage = (typeof STAGES)[number];
/** The stages with no kernel behind them. */
const PURE: readonly Stage[] = ['logging', 'kubernetes', 'desired', 'plan'];
/** What each stage may not import. */
const FORBIDDEN: Record<Stage, readonly Stage[]> = {
  logging: ['kubernetes', 'desired', 'plan', 'kernel', 'proxy', 'cli'],
  kubernetes: ['kernel', 'proxy', 'cli'],
  desired: ['kernel', 'proxy', 'cli'],
  plan: ['kernel', 'proxy', 'cli'],
  kernel: ['proxy', 'cli'],
  proxy: ['cli'],
  cli: [],
};

interface Import {
  specifier: string;
  typeOnly: boolean;
}

/** Every module a file names: static imports and re-exports, `import x = require()`, and dynamic import(). */
function importsOf(fileName: string, text: string): Import[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const out: Import[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = clause !== undefined && (clause.isTypeOnly || (!clause.name && named !== undefined && named.length > 0 && named.every((e) => e.isTypeOnly)));
      out.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      out.push({ specifier: node.moduleReference.expression.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      out.push({ specifier: node.arguments[0].text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function stageOf(path: string): Stage | undefined {
  const first = relative(LIB, path).split(sep)[0];
  return (STAGES as readonly string[]).includes(first) ? (first as Stage) : undefined;
}

/** The rule broken by each import of the file at `path` (inside lib/), as "file: imports 'x': why". */
function violations(path: string, text: string): string[] {
  const file = relative(LIB, path);
  const stage = stageOf(path);
  if (stage === undefined) return [`${file}: is in none of the stages (${STAGES.join(', ')})`];
  const out: string[] = [];
  for (const { specifier, typeOnly } of importsOf(path, text)) {
    const say = (why: string) => out.push(`${file}: imports '${specifier}'${typeOnly ? ' (types)' : ''}: ${why}`);
    if (specifier.startsWith('.')) {
      const target = resolve(dirname(path), specifier);
      const to = stageOf(target);
      if (relative(LIB, target).startsWith('..')) say('a path out of the proxy\'s lib/ (import the library as \'ipvs-netlink\')');
      else if (to === undefined) say('a file in none of the stages');
      else if (FORBIDDEN[stage].includes(to)) say(`${stage}/ may not import from ${to}/ (the pipeline runs kubernetes → desired → plan → kernel → proxy → cli)`);
    } else if (specifier === 'ipvs-netlink') {
      if (PURE.includes(stage) && !typeOnly) say(`${stage}/ has no kernel behind it: only \`import type\` from 'ipvs-netlink' (values from 'ipvs-netlink/address')`);
    } else if (specifier.startsWith('ipvs-netlink/') && specifier !== 'ipvs-netlink/address') {
      say('not one of the library\'s entry points (\'ipvs-netlink\', \'ipvs-netlink/address\')');
    } else if ((specifier === 'node:http' || specifier === 'http') && !typeOnly) {
      say('an ES import of node:http loads undici, tls and http2 with it: take it from proxy/node-http.ts');
    } else if (specifier === 'prom-client' && !typeOnly) {
      say("prom-client's index loads its Pushgateway client (node:https, zlib): take its parts from proxy/prom-client-parts.ts");
    }
  }
  return out;
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

t.test('every file of kube-proxy-ipvs/lib keeps the pipeline\'s import rule', (t) => {
  const all = files(LIB);
  t.ok(all.length > 40, `${all.length} files read`);
  for (const stage of STAGES) t.ok(all.some((f) => stageOf(f) === stage), `${stage}/ has files`);
  const broken = all.flatMap((f) => violations(f, readFileSync(f, 'utf8')));
  t.same(broken, [], broken.join('\n'));
  t.end();
});

t.test('the check sees what it must refuse', (t) => {
  const at = (file: string) => join(LIB, file);
  t.same(violations(at('desired/x.ts'), "import { Controller } from '../kernel/controller.js';"), [
    "desired/x.ts: imports '../kernel/controller.js': desired/ may not import from kernel/ (the pipeline runs kubernetes → desired → plan → kernel → proxy → cli)",
  ]);
  t.equal(violations(at('plan/x.ts'), "const m = await import('../proxy/proxy.js');").length, 1, 'a dynamic import');
  t.equal(violations(at('kubernetes/x.ts'), "export { x } from '../cli/run.js';").length, 1, 'a re-export');
  t.equal(violations(at('kernel/x.ts'), "import type { ProxyOptions } from '../proxy/options.js';").length, 1, 'types count too between stages');
  t.equal(violations(at('proxy/x.ts'), "import { registerRunCommand } from '../cli/run.js';").length, 1);
  t.equal(violations(at('plan/x.ts'), "import { Ipvs } from 'ipvs-netlink';").length, 1, 'a library value in a pure stage');
  t.equal(violations(at('plan/x.ts'), "import { type Ipvs, type Ipset } from 'ipvs-netlink';").length, 0, 'types only, written inline');
  t.equal(violations(at('plan/x.ts'), "import type { Ipvs } from 'ipvs-netlink';\nimport { parseCidr } from 'ipvs-netlink/address';").length, 0);
  t.equal(violations(at('kernel/x.ts'), "import { native } from 'ipvs-netlink/dist/lib/netlink/binding.js';").length, 1, 'a library internal by package path');
  t.equal(violations(at('kernel/x.ts'), "import { Ipvs } from '../../../lib/ipvs/client.js';").length, 1, 'the library by relative path');
  t.equal(violations(at('cli/x.ts'), "import { Controller } from '../kernel/controller.js';\nimport { plan } from '../plan/planner.js';").length, 0, 'downstream may import upstream');
  t.same(violations(at('x.ts'), ''), ['x.ts: is in none of the stages (logging, kubernetes, desired, plan, kernel, proxy, cli)']);
  t.equal(violations(at('logging/x.ts'), "import type { LoggingOptions } from '../proxy/options.js';").length, 1, 'logging/ is beneath every stage');
  t.equal(violations(at('kubernetes/x.ts'), "import { logV } from '../logging/logger.js';").length, 0, 'every stage may log through it');
  t.equal(violations(at('proxy/x.ts'), "import { createServer } from 'node:http';").length, 1, 'node:http by ES import');
  t.equal(violations(at('proxy/x.ts'), "import type { Server } from 'node:http';\nimport { createServer } from './node-http.js';").length, 0, 'its types, and the CommonJS-loaded one');
  t.equal(violations(at('proxy/x.ts'), "import { Counter } from 'prom-client';").length, 1, "prom-client's index");
  t.equal(violations(at('proxy/x.ts'), "import type { Counter } from 'prom-client';").length, 0, "prom-client's types");
  t.end();
});
