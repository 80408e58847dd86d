// The checking module's rule, pinned: which error a bad value gets (Node's
// ERR_INVALID_ARG_TYPE / ERR_INVALID_ARG_VALUE / ERR_OUT_OF_RANGE), the
// parts each error keeps, and a message that names the field.
import t, { type Test } from 'tap';

import { parseAddress, writeAddress } from '../../lib/util/address.js';
import {
  ArgumentRangeError,
  ArgumentTypeError,
  boolean,
  FieldNames,
  integer,
  interfaceName,
  knownFields,
  name,
  object,
  oneOf,
  optionalBoolean,
  optionalInteger,
  port,
  prefixField,
  string,
  tableValue,
} from '../../lib/util/check.js';

/** What `run` threw, or a failure when it did not throw. */
function thrown(t: Test, run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  t.fail('expected a throw');
  return undefined;
}

type Expect = { kind: typeof TypeError | typeof RangeError; code: string; field: string; value?: unknown };

function refuses(t: Test, what: string, run: () => unknown, e: Expect): void {
  const err = thrown(t, run) as ArgumentTypeError | ArgumentRangeError;
  t.type(err, e.kind, `${what}: a ${e.kind.name}`);
  t.type(err, e.kind === RangeError ? ArgumentRangeError : ArgumentTypeError, `${what}: the checking module's class`);
  t.equal(err.name, e.kind.name, `${what}: its name is ${e.kind.name}`);
  t.equal(err.code, e.code, `${what}: ${e.code}`);
  t.equal(err.field, e.field, `${what}: field ${e.field}`);
  if ('value' in e) t.same(err.value, e.value, `${what}: keeps the value`);
  t.ok(err.message.startsWith(`${e.field} must be `), `${what}: the message names the field first ("${err.message}")`);
  t.ok(err.expected.length > 0 && err.message.includes(err.expected), `${what}: the message says what is expected`);
}

const TYPE = { kind: TypeError, code: 'ERR_INVALID_ARG_TYPE' } as const;
const VALUE = { kind: TypeError, code: 'ERR_INVALID_ARG_VALUE' } as const;
const RANGE = { kind: RangeError, code: 'ERR_OUT_OF_RANGE' } as const;

t.test('numbers: the wrong kind is a TypeError; a non-integer or one outside the range is a RangeError', (t) => {
  refuses(t, "port '80'", () => port('80', 'service', 'port'), { ...TYPE, field: 'service.port', value: '80' });
  refuses(t, 'port 1.5', () => port(1.5, 'service', 'port'), { ...RANGE, field: 'service.port', value: 1.5 });
  refuses(t, 'port 70000', () => port(70000, 'service.port'), { ...RANGE, field: 'service.port', value: 70000 });
  refuses(t, 'port -1', () => port(-1, 'port'), { ...RANGE, field: 'port', value: -1 });
  refuses(t, 'port NaN', () => port(NaN, 'port'), { ...RANGE, field: 'port' });
  refuses(t, 'port Infinity', () => port(Infinity, 'port'), { ...RANGE, field: 'port', value: Infinity });
  refuses(t, 'port undefined', () => port(undefined, 'port'), { ...TYPE, field: 'port', value: undefined });
  refuses(t, 'port 80n', () => port(80n, 'port'), { ...TYPE, field: 'port', value: 80n });
  refuses(t, 'integer null', () => integer(null, 'weight', 0, 10), { ...TYPE, field: 'weight', value: null });
  t.equal(port(0, 'port'), 0);
  t.equal(port(65535, 'port'), 65535);
  t.equal(integer(-5, 'x', -5, 5), -5);
  t.equal(optionalInteger(undefined, 'x', 1, 9, 7), 7, 'optionalInteger: the fallback for undefined');
  refuses(t, 'optionalInteger 10', () => optionalInteger(10, 'x', 1, 9, 7), { ...RANGE, field: 'x', value: 10 });
  const err = thrown(t, () => port(70000, 'port')) as ArgumentRangeError;
  t.equal(err.expected, 'an integer from 0 to 65535', 'the range is part of the error');
  t.equal(err.message, 'port must be an integer from 0 to 65535, got 70000');
  t.end();
});

t.test('booleans: undefined is refused where one is required; optionalBoolean defaults', (t) => {
  refuses(t, 'boolean(undefined)', () => boolean(undefined, 'flags', 'onePacket'), { ...TYPE, field: 'flags.onePacket', value: undefined });
  refuses(t, "boolean('yes')", () => boolean('yes', 'counters'), { ...TYPE, field: 'counters', value: 'yes' });
  refuses(t, 'boolean(1)', () => boolean(1, 'counters'), { ...TYPE, field: 'counters', value: 1 });
  t.equal(boolean(false, 'x'), false);
  t.equal(optionalBoolean(undefined, 'x', true), true, 'optionalBoolean: the fallback for undefined (true)');
  t.equal(optionalBoolean(undefined, 'x', false), false, 'optionalBoolean: the fallback for undefined (false)');
  t.equal(optionalBoolean(false, 'x', true), false, 'a value given wins over the fallback');
  refuses(t, "optionalBoolean('no')", () => optionalBoolean('no', 'options', true, 'stats'), { ...TYPE, field: 'options.stats', value: 'no' });
  t.end();
});

t.test('objects, strings and names', (t) => {
  refuses(t, 'object(null)', () => object(null, 'service'), { ...TYPE, field: 'service', value: null });
  refuses(t, 'object([])', () => object([], 'service'), { ...TYPE, field: 'service' });
  refuses(t, 'object(5)', () => object(5, 'service', 'flags'), { ...TYPE, field: 'service.flags', value: 5 });
  refuses(t, 'string(5)', () => string(5, 'name'), { ...TYPE, field: 'name', value: 5 });
  const rule = { maxBytes: 15, pattern: /^[a-z]+$/, patternText: 'lower-case letters' };
  refuses(t, "name('')", () => name('', 'scheduler', rule), { ...VALUE, field: 'scheduler', value: '' });
  refuses(t, 'name(16 bytes)', () => name('x'.repeat(16), 'scheduler', rule), { ...RANGE, field: 'scheduler' });
  refuses(t, 'name(15 bytes of multi-byte characters)', () => name('é'.repeat(8), 'scheduler', { maxBytes: 15 }), { ...RANGE, field: 'scheduler' });
  refuses(t, 'name(pattern)', () => name('rr1', 'scheduler', rule), { ...VALUE, field: 'scheduler', value: 'rr1' });
  refuses(t, 'name(newline)', () => name('a\nb', 'set', { maxBytes: 31 }), { ...VALUE, field: 'set' });
  refuses(t, 'name(5)', () => name(5, 'set', { maxBytes: 31 }), { ...TYPE, field: 'set', value: 5 });
  t.equal(name('rr', 'scheduler', rule), 'rr');
  for (const bad of ['a/b', 'a b', 'a:1', '.', '..'])
    refuses(t, `interfaceName(${JSON.stringify(bad)})`, () => interfaceName(bad, 'link', 15), { ...VALUE, field: 'link', value: bad });
  refuses(t, 'interfaceName(16 bytes)', () => interfaceName('x'.repeat(16), 'link', 15), { ...RANGE, field: 'link' });
  t.equal(interfaceName('kube-ipvs0', 'link', 15), 'kube-ipvs0');
  t.equal(interfaceName('.a', 'link', 15), '.a', "a name that only starts with '.' is a name");
  t.end();
});

t.test('fixed lists: a string not on the list is ERR_INVALID_ARG_VALUE; anything else ERR_INVALID_ARG_TYPE', (t) => {
  refuses(t, "oneOf('icmp')", () => oneOf('icmp', ['tcp', 'udp'], 'service', 'protocol'), { ...VALUE, field: 'service.protocol', value: 'icmp' });
  refuses(t, 'oneOf(6)', () => oneOf(6, ['tcp', 'udp'], 'service', 'protocol'), { ...TYPE, field: 'service.protocol', value: 6 });
  t.equal(oneOf('udp', ['tcp', 'udp'], 'p'), 'udp');
  const table = { masq: 0, route: 3 };
  t.equal(tableValue(table, 'route', 'forward'), 3);
  refuses(t, "tableValue('nat')", () => tableValue(table, 'nat', 'destination', 'forward'), { ...VALUE, field: 'destination.forward', value: 'nat' });
  refuses(t, "tableValue('toString')", () => tableValue(table, 'toString', 'forward'), { ...VALUE, field: 'forward', value: 'toString' });
  const err = thrown(t, () => oneOf('icmp', ['tcp', 'udp'], 'protocol')) as ArgumentTypeError;
  t.equal(err.message, 'protocol must be one of "tcp", "udp", got "icmp"');
  t.end();
});

t.test('unknown fields are refused by name; fields set to undefined are not', (t) => {
  const known = new Set(['scheduler', 'port']);
  refuses(t, 'schedular', () => knownFields({ schedular: 'rr' }, known, 'service'), { ...VALUE, field: 'service.schedular', value: 'rr' });
  const err = thrown(t, () => knownFields({ schedular: 'rr' }, known, 'service')) as ArgumentTypeError;
  t.match(err.message, /known: scheduler, port/, 'the message lists the fields it takes');
  t.doesNotThrow(() => knownFields({ scheduler: 'rr', other: undefined }, known, 'service'), 'a field set to undefined passes');
  const hidden = thrown(t, () => knownFields({ x: 1 }, new Set(['a', 'testOnly']), 'options', ['a'])) as ArgumentTypeError;
  t.notMatch(hidden.message, /testOnly/, 'fields not for callers are not listed');
  t.end();
});

t.test('FieldNames lets through and refuses what knownFields does, whatever came before', (t) => {
  const known = new Set(['address', 'port', 'weight', 'forward']);
  const names = new FieldNames(known);
  const keys = ['address', 'port', 'weight', 'forward', 'other', 'weigth'];
  let refused = 0;
  for (let i = 0; i < 20_000; i++) {
    // Mostly the same fields in the same order, as a batch's objects come;
    // now and then another order, fewer fields, a misspelt or undefined one.
    const o: Record<string, unknown> = {};
    const order = Math.random() < 0.8 ? keys.slice(0, 4) : [...keys].sort(() => Math.random() - 0.5).slice(0, 1 + Math.floor(Math.random() * 6));
    for (const k of order) o[k] = Math.random() < 0.1 ? undefined : 1;
    const want = thrownOrNot(() => knownFields(o, known, 'destination'));
    const got = thrownOrNot(() => names.check(o, 'destination'));
    if (got !== want) t.fail(`${JSON.stringify(Object.entries(o))}: ${got}, knownFields ${want}`);
    if (want) refused++;
  }
  t.ok(refused > 500, `20,000 objects agree, ${refused} refused`);
  refuses(t, 'a misspelt field after the same fields many times', () => names.check({ address: 1, port: 1, weigth: 2 }, 'destination'), { ...VALUE, field: 'destination.weigth', value: 2 });
  t.end();
});

/** The message of what `run` threw, or '' when it did not throw. */
function thrownOrNot(run: () => void): string {
  try {
    run();
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

t.test('addresses throw the same errors, naming the field', (t) => {
  refuses(t, 'parseAddress(5)', () => parseAddress(5, 'addresses[0]'), { ...TYPE, field: 'addresses[0]', value: 5 });
  refuses(t, "parseAddress('10.0.0.300')", () => parseAddress('10.0.0.300', 'addresses[0]'), { ...VALUE, field: 'addresses[0]', value: '10.0.0.300' });
  refuses(t, "parseAddress('fe80::1%eth0')", () => parseAddress('fe80::1%eth0', 'a'), { ...VALUE, field: 'a' });
  const out = new Uint8Array(16);
  refuses(t, "writeAddress('x')", () => writeAddress('x', out, 0, 'service', 'address'), { ...VALUE, field: 'service.address', value: 'x' });
  refuses(t, 'writeAddress(undefined)', () => writeAddress(undefined, out, 0, 'service', 'address'), { ...TYPE, field: 'service.address', value: undefined });
  t.same(parseAddress('fd00:0::1', 'a'), { family: 'inet6', text: 'fd00::1' });
  t.end();
});

t.test('prefixField re-roots an error under a batch index, keeping every part', (t) => {
  const inner = thrown(t, () => port(1.5, 'service', 'port')) as ArgumentRangeError;
  const outer = prefixField(inner, 'ops[3].') as ArgumentRangeError;
  t.type(outer, ArgumentRangeError);
  t.match(outer, { code: 'ERR_OUT_OF_RANGE', field: 'ops[3].service.port', expected: inner.expected, value: 1.5 });
  t.equal(outer.message, 'ops[3].service.port must be an integer from 0 to 65535, got 1.5');
  const typed = prefixField(thrown(t, () => oneOf('x', ['a'], 'op')), 'ops[0].') as ArgumentTypeError;
  t.match(typed, { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', field: 'ops[0].op' });
  const other = new Error('not ours');
  t.equal(prefixField(other, 'ops[0].'), other, 'any other error is returned as it is');
  t.end();
});
