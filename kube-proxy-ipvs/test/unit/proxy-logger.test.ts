/**
 * Log lines in kube-proxy's shapes: klog's text header and key=value
 * encoding by default, component-base's JSON (ts, caller, msg, v, then the
 * pairs, err last, no level) with --logging-format=json; -v selecting
 * what is written.
 */
import t from 'tap';
import { pino } from 'pino';
import { logV, makeLogger } from '../../lib/logging/logger.js';

function capture(format: 'text' | 'json', verbosity: number) {
  const lines: string[] = [];
  const log = makeLogger({ format, verbosity }, { write: (s: string) => lines.push(s) });
  return { log, lines };
}

t.test('text: klog line format', async (t) => {
  const { log, lines } = capture('text', 0);
  log.info({ entry: 'net/netfilter/nf_conntrack_max', value: 131072, ok: true, ips: ['10.0.0.1'] }, 'Set sysctl');
  log.child({ component: 'controller' }).warn({ err: new Error('boom'), note: 'two\nlines' }, 'sync failed');
  log.error('plain');
  log.debug('not at -v 0');
  t.equal(lines.length, 3, 'debug lines need -v 2');
  t.match(lines[0], /^I\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ kube-proxy-ipvs:0\] "Set sysctl" entry="net\/netfilter\/nf_conntrack_max" value=131072 ok=true ips=\["10.0.0.1"\]\n$/);
  t.match(lines[0], new RegExp(`^I\\d{4} [\\d:.]{15} ${String(process.pid).padStart(7)} `), 'the pid right-aligned in 7 columns');
  t.match(lines[1], /^W\d{4} .* controller:0\] "sync failed" err="boom" note=<\n\ttwo\n\tlines\n >\n$/);
  t.match(lines[2], /^E\d{4} .*\] "plain"\n$/);
});

t.test("fields named as pino's base fields are the caller's, and printed", async (t) => {
  for (const format of ['text', 'json'] as const) {
    const { log, lines } = capture(format, 0);
    log.info({ name: 'net/ipv4/vs/conntrack', before: 0, after: 1 }, 'Changed sysctl');
    log.info({ pid: 42, hostname: 'node-a' }, 'fields');
    if (format === 'text') {
      t.match(lines[0], /\] "Changed sysctl" name="net\/ipv4\/vs\/conntrack" before=0 after=1\n$/, "text: upstream's EnsureSysctl line, name included");
      t.match(lines[1], /\] "fields" pid=42 hostname="node-a"\n$/);
    } else {
      t.match(JSON.parse(lines[0]), { msg: 'Changed sysctl', name: 'net/ipv4/vs/conntrack', before: 0, after: 1 }, 'json: name included');
      t.match(JSON.parse(lines[1]), { pid: 42, hostname: 'node-a' });
    }
  }
});

t.test('json: the Kubernetes JSON log shape', async (t) => {
  const { log, lines } = capture('json', 2);
  log.info({ ipFamily: 'IPv4', n: 3 }, 'Using ipvs Proxier');
  log.debug({ a: 1 }, 'detail');
  log.child({ component: 'apiserver' }).error({ err: new Error('content changed'), kind: 'resync' }, 'Error running ProxyServer');
  log.trace('not at -v 2');
  t.equal(lines.length, 3);
  const [info, debug, error] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  t.same(Object.keys(info), ['ts', 'caller', 'msg', 'v', 'ipFamily', 'n'], 'key order: ts, caller, msg, v, then the pairs');
  t.match(info, { ts: Number, caller: 'kube-proxy-ipvs:0', msg: 'Using ipvs Proxier', v: 0, ipFamily: 'IPv4', n: 3 });
  t.equal(debug.v, 2, 'debug lines are V(2)');
  t.same(Object.keys(error), ['ts', 'caller', 'msg', 'kind', 'err'], 'error lines: no v, err last');
  t.equal(error.err, 'content changed');
  t.notOk(lines.some((l) => l.includes('"level"')), 'no level key');
});

t.test("-v n writes the lines logged at V(0) to V(n), as klog's V(n).Info", async (t) => {
  const written = (verbosity: number) => {
    const { log, lines } = capture('text', verbosity);
    const child = log.child({ component: 'conntrack' });
    for (const v of [0, 1, 2, 3, 4, 5] as const) logV(child, v, { v }, `at V(${v})`);
    return lines.map((l) => /"at V\((\d)\)"/.exec(l)?.[1]).join('');
  };
  t.equal(written(0), '0', '-v 0: V(0) only (a V(1) line such as "Changed sysctl" is not written)');
  t.equal(written(1), '01');
  t.equal(written(2), '012', '-v 2: not the V(3) and V(4) lines');
  t.equal(written(3), '0123');
  t.equal(written(4), '01234');
  t.equal(written(5), '012345');
  t.equal(written(9), '012345');
});

t.test('json: each line carries the V it was logged at', async (t) => {
  const { log, lines } = capture('json', 5);
  for (const v of [0, 1, 2, 3, 4, 5] as const) logV(log, v, {}, `V${v}`);
  log.debug('debug');
  log.trace('trace');
  t.same(lines.map((l) => (JSON.parse(l) as { v: number }).v), [0, 1, 2, 3, 4, 5, 2, 5]);
});

t.test("a caller's own pino logger (no V(1), V(3), V(4) levels) gets the nearest of its own", async (t) => {
  const got: number[] = [];
  const log = pino({ level: 'trace' }, { write: (s: string) => void got.push((JSON.parse(s) as { level: number }).level) });
  for (const v of [0, 1, 2, 3, 4, 5] as const) logV(log, v, {}, 'x');
  t.same(got, [30, 30, 20, 20, 20, 10]);
});
