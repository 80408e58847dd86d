// The part of tap's API the library's tests use, for Bun, where tap itself
// cannot start (it needs node:v8's Serializer and V8's call-site objects,
// which Bun does not have). Same comparisons as tap (tcompare: same, strict,
// match), same TAP output and closing "# { total, pass, fail }" line. A
// method it does not have fails the test that calls it, by name, so a new
// assertion in a test shows up here instead of passing unseen.
import { match, same, strict } from 'tcompare';

const totals = { total: 0, pass: 0, fail: 0, skip: 0 };

function diagnostic(lines, depth) {
  const pad = '    '.repeat(depth) + '  ';
  return [`${pad}---`, ...String(lines).trimEnd().split('\n').map((l) => `${pad}  ${l}`), `${pad}...`].join('\n') + '\n';
}

function splitArgs(args) {
  // (wanted?, message?) as tap reads them: a string first is the message.
  if (typeof args[0] === 'string') return [undefined, args[0]];
  return [args[0], args[1]];
}

class Test {
  #depth;
  #count = 0;
  #failed = 0;
  #queue = Promise.resolve();
  #teardowns = [];
  // Assertions made on this test while one of its subtests runs wait for
  // that subtest's end, as in tap (the subtest's lines stay together).
  #busy = false;
  #held = [];
  #ended;
  #end;

  constructor(depth) {
    this.#depth = depth;
    this.#ended = new Promise((resolve) => (this.#end = resolve));
    // Unknown methods fail loudly (see the header).
    return new Proxy(this, {
      get(target, prop) {
        if (typeof prop === 'string' && prop !== 'then' && !(prop in target)) {
          return () => target.fail(`tap-lite has no t.${prop}: add it to test/package/support/tap-lite.mjs`);
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  }

  get failed() {
    return this.#failed;
  }
  get count() {
    return this.#count;
  }

  #write(text) {
    process.stdout.write('    '.repeat(this.#depth) + text + '\n');
  }

  #point(ok, message, diag, directive = '') {
    if (this.#busy) {
      this.#held.push([ok, message, diag, directive]);
      return ok;
    }
    this.#count++;
    totals.total++;
    if (directive) totals.skip++;
    else if (ok) totals.pass++;
    else {
      totals.fail++;
      this.#failed++;
    }
    this.#write(`${ok ? 'ok' : 'not ok'} ${this.#count} - ${message}${directive}`);
    if (!ok && diag) process.stdout.write(diagnostic(diag, this.#depth));
    return ok;
  }

  pass(message = '(unnamed test)') {
    return this.#point(true, message);
  }
  fail(message = '(unnamed test)', extra) {
    return this.#point(false, message, extra?.stack ?? extra);
  }
  skip(message = '') {
    return this.#point(true, message, undefined, ' # SKIP');
  }
  ok(value, message = 'expect truthy value') {
    return this.#point(!!value, message, `found: ${String(value)}`);
  }
  notOk(value, message = 'expect falsey value') {
    return this.#point(!value, message, `found: ${String(value)}`);
  }
  equal(found, wanted, message = 'should be equal') {
    return this.#point(found === wanted || (found !== found && wanted !== wanted), message, `found: ${String(found)}\nwanted: ${String(wanted)}`);
  }
  not(found, notWanted, message = 'should not be equal') {
    return this.#point(found !== notWanted, message, `found: ${String(found)}`);
  }
  #compare(fn, found, wanted, message) {
    const r = fn(found, wanted);
    return this.#point(r.match, message, r.diff);
  }
  same(found, wanted, message = 'should be equivalent') {
    return this.#compare(same, found, wanted, message);
  }
  strictSame(found, wanted, message = 'should be equivalent strictly') {
    return this.#compare(strict, found, wanted, message);
  }
  match(found, wanted, message = 'should match pattern provided') {
    return this.#compare(match, found, wanted, message);
  }
  notMatch(found, pattern, message = 'should not match pattern provided') {
    return this.#point(!match(found, pattern).match, message, `found: ${String(found)}\npattern: ${String(pattern)}`);
  }
  type(found, klass, message = 'type is ' + (typeof klass === 'function' ? klass.name : klass)) {
    const ok = typeof klass === 'function' ? found instanceof klass : typeof found === klass || found?.constructor?.name === klass;
    return this.#point(ok, message, `found: ${found?.constructor?.name ?? typeof found}`);
  }
  #caught(error, wanted, message) {
    if (wanted === undefined) return this.#point(true, message);
    return this.#compare(match, error, wanted, message);
  }
  throws(fn, ...args) {
    const [wanted, message = 'expected to throw'] = splitArgs(args);
    try {
      fn();
    } catch (e) {
      this.#caught(e, wanted, message);
      return e;
    }
    return this.#point(false, message, 'did not throw');
  }
  doesNotThrow(fn, message = 'expected to not throw') {
    try {
      fn();
    } catch (e) {
      return this.#point(false, message, e?.stack ?? String(e));
    }
    return this.#point(true, message);
  }
  comment(...args) {
    this.#write(`# ${args.join(" ")}`);
  }
  async rejects(what, ...args) {
    const [wanted, message = 'expect rejected Promise'] = splitArgs(args);
    try {
      await (typeof what === 'function' ? what() : what);
    } catch (e) {
      return this.#caught(e, wanted, message);
    }
    return this.#point(false, message, 'resolved');
  }
  teardown(fn) {
    this.#teardowns.push(fn);
  }
  end() {
    this.#end();
  }

  test(name, opts, fn) {
    if (typeof opts === 'function') fn = opts;
    const run = async () => {
      this.#write(`# Subtest: ${name}`);
      const child = new Test(this.#depth + 1);
      this.#busy = true;
      await child.run(fn);
      this.#busy = false;
      this.#point(child.failed === 0, name);
      for (const held of this.#held.splice(0)) this.#point(...held);
    };
    const p = (this.#queue = this.#queue.then(run));
    return p;
  }

  /** Runs fn as this test's body, then its subtests, then its teardowns. */
  async run(fn) {
    try {
      const r = fn(this);
      // A body that returns a promise ends when it settles; otherwise at t.end().
      if (r && typeof r.then === 'function') await r;
      else await this.#ended;
    } catch (e) {
      this.fail(`uncaught: ${e?.message ?? e}`, e);
    }
    await this.#queue;
    for (const td of this.#teardowns) {
      try {
        await td();
      } catch (e) {
        this.fail(`teardown failed: ${e?.message ?? e}`, e);
      }
    }
    this.#write(`1..${this.#count}`);
  }

  /** The root's end: its queued tests have all run. */
  async done() {
    await this.#queue;
    for (const td of this.#teardowns) await td();
  }
}

const root = new Test(0);
let closed = false;
process.stdout.write('TAP version 14\n');
process.on('beforeExit', async () => {
  if (closed) return;
  closed = true;
  await root.done();
  process.stdout.write(`1..${root.count}\n# { total: ${totals.total}, pass: ${totals.pass}, fail: ${totals.fail}, skip: ${totals.skip} }\n`);
  if (totals.fail) process.exitCode = 1;
});
process.on('unhandledRejection', (e) => root.fail(`unhandled rejection: ${e?.message ?? e}`, e));

export default root;
export const t = root;
