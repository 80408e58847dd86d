/**
 * The library's one checking module: every argument a caller passes is
 * checked here (or with these errors) before a byte is sent, and every bad
 * value gets the same kind of error for the same kind of mistake. The rule
 * is Node's own (its ERR_INVALID_ARG_TYPE, ERR_INVALID_ARG_VALUE and
 * ERR_OUT_OF_RANGE):
 *
 * - TypeError, code ERR_INVALID_ARG_TYPE: the value is of the wrong kind
 *   (a string where a number goes, undefined where a value is required).
 * - TypeError, code ERR_INVALID_ARG_VALUE: the kind is right but the value
 *   is not one the field takes (a malformed address, an unknown name, a
 *   field the object does not have, two fields that contradict each other).
 * - RangeError, code ERR_OUT_OF_RANGE: a number, or a length, outside what
 *   the field takes; a number that is not an integer where one is needed
 *   (1.5 for a port) is out of range too.
 *
 * Each error keeps its parts (`field`, `code`, `expected`, `value`) and its
 * message is built from them once, by argumentMessage() below.
 *
 * Hot paths (a batch of a hundred thousand operations) pass the field as
 * two parts, `field` and `name`, so the full name is built only for a
 * value that is refused; a batch re-roots a refused op's field under
 * `ops[i].` with prefixField() instead of building every op's path.
 */

/** The three codes an argument error can carry (Node's names for them). */
export type CheckCode = 'ERR_INVALID_ARG_TYPE' | 'ERR_INVALID_ARG_VALUE' | 'ERR_OUT_OF_RANGE';

/** The two codes a TypeError carries: the wrong kind of value, or a value of the right kind the field does not take. */
export type TypeErrorCode = Exclude<CheckCode, 'ERR_OUT_OF_RANGE'>;

/** The parts every argument error keeps. */
export interface ArgumentErrorParts {
  /** ERR_INVALID_ARG_TYPE, ERR_INVALID_ARG_VALUE or ERR_OUT_OF_RANGE. */
  readonly code: CheckCode;
  /** The argument's path, as the caller wrote it (`ops[3].destination.port`). */
  readonly field: string;
  /** What the field takes, in words (`an integer from 0 to 65535`). */
  readonly expected: string;
  /** The value that was refused, as it was passed. */
  readonly value: unknown;
}

/** The one place an argument error's message is built: `<field> must be <expected>, got <value>`. */
export function argumentMessage(field: string, expected: string, value: unknown): string {
  return `${field} must be ${expected}, got ${describeValue(value)}`;
}

/** A bad argument of the wrong kind, or of the right kind with a value the field does not take. */
export class ArgumentTypeError extends TypeError implements ArgumentErrorParts {
  /** ERR_INVALID_ARG_TYPE (wrong kind) or ERR_INVALID_ARG_VALUE (right kind, value not taken). */
  readonly code: TypeErrorCode;
  /** The argument's path, as the caller wrote it (`ops[3].destination.address`). */
  readonly field: string;
  /** What the field takes, in words. */
  readonly expected: string;
  /** The value that was refused. */
  readonly value: unknown;

  constructor(code: TypeErrorCode, field: string, expected: string, value: unknown) {
    super(argumentMessage(field, expected, value));
    this.name = 'TypeError';
    this.code = code;
    this.field = field;
    this.expected = expected;
    this.value = value;
  }
}

/** A number (or a length) outside what the field takes, a non-integer where an integer goes included. */
export class ArgumentRangeError extends RangeError implements ArgumentErrorParts {
  /** Always ERR_OUT_OF_RANGE. */
  readonly code = 'ERR_OUT_OF_RANGE' as const;
  /** The argument's path, as the caller wrote it (`service.port`). */
  readonly field: string;
  /** The range the field takes, in words (`an integer from 0 to 65535`). */
  readonly expected: string;
  /** The value that was refused. */
  readonly value: unknown;

  constructor(field: string, expected: string, value: unknown) {
    super(argumentMessage(field, expected, value));
    this.name = 'RangeError';
    this.field = field;
    this.expected = expected;
    this.value = value;
  }
}

/** Either kind of argument error. */
export type ArgumentError = ArgumentTypeError | ArgumentRangeError;

/** True for the errors this module makes. */
export function isArgumentError(err: unknown): err is ArgumentError {
  return err instanceof ArgumentTypeError || err instanceof ArgumentRangeError;
}

/**
 * The same error with its field under `prefix` (`ops[3].` + `service.port`),
 * its message built again from the parts. Anything else is returned as it is.
 */
export function prefixField(err: unknown, prefix: string): unknown {
  if (err instanceof ArgumentTypeError) return new ArgumentTypeError(err.code, prefix + err.field, err.expected, err.value);
  if (err instanceof ArgumentRangeError) return new ArgumentRangeError(prefix + err.field, err.expected, err.value);
  return err;
}

/** How a refused value is shown: strings quoted, objects by kind, never a whole object dumped. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? value.slice(0, 77) + '...' : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'function') return 'a function';
  return String(value); // number, boolean, undefined, symbol
}

function path(field: string, name?: string): string {
  return name === undefined ? field : `${field}.${name}`;
}

/** The value has the wrong kind. */
export function wrongType(field: string, expected: string, value: unknown): ArgumentTypeError {
  return new ArgumentTypeError('ERR_INVALID_ARG_TYPE', field, expected, value);
}

/** The value has the right kind but is not one the field takes. */
export function wrongValue(field: string, expected: string, value: unknown): ArgumentTypeError {
  return new ArgumentTypeError('ERR_INVALID_ARG_VALUE', field, expected, value);
}

/** A field the object does not take; `known` lists those it does. */
export function unknownField(field: string, known: Iterable<string>, value: unknown): ArgumentTypeError {
  return wrongValue(field, `left out (not a field it takes; known: ${[...known].join(', ')})`, value);
}

/** The number (or length) is outside the field's range. */
export function outOfRange(field: string, expected: string, value: unknown): ArgumentRangeError {
  return new ArgumentRangeError(field, expected, value);
}

/**
 * An integer from min to max inclusive. (The check is all a valid value
 * runs; the error is made elsewhere, which keeps this small enough for the
 * compiler to inline into a batch's writers.)
 */
export function integer(value: unknown, field: string, min: number, max: number, name?: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  throw notInteger(value, field, min, max, name);
}

/** The error for a value integer() refuses. */
function notInteger(value: unknown, field: string, min: number, max: number, name?: string): ArgumentError {
  const expected = `an integer from ${min} to ${max}`;
  return typeof value === 'number' ? outOfRange(path(field, name), expected, value) : wrongType(path(field, name), expected, value);
}

/** integer() when the value may be absent: `fallback` for undefined. */
export function optionalInteger(value: unknown, field: string, min: number, max: number, fallback: number, name?: string): number {
  return value === undefined ? fallback : integer(value, field, min, max, name);
}

/** A port number, 0 to 65535. */
export function port(value: unknown, field: string, name?: string): number {
  return integer(value, field, 0, 65535, name);
}

/** A boolean; undefined is refused (use optionalBoolean for a field that may be left out). */
export function boolean(value: unknown, field: string, name?: string): boolean {
  if (typeof value === 'boolean') return value;
  throw wrongType(path(field, name), 'a boolean', value);
}

/** boolean() for a field that may be left out: `fallback` for undefined. */
export function optionalBoolean(value: unknown, field: string, fallback: boolean, name?: string): boolean {
  return value === undefined ? fallback : boolean(value, field, name);
}

/** A plain object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A plain object (not null, not an array). */
export function object(value: unknown, field: string, name?: string): Record<string, unknown> {
  if (isObject(value)) return value;
  throw wrongType(path(field, name), 'an object', value);
}

/** An array. */
export function array(value: unknown, field: string): readonly unknown[] {
  if (Array.isArray(value)) return value;
  throw wrongType(field, 'an array', value);
}

/** A string. */
export function string(value: unknown, field: string, name?: string): string {
  if (typeof value === 'string') return value;
  throw wrongType(path(field, name), 'a string', value);
}

/** What a name() takes. */
export interface NameRule {
  /** Longest allowed, in UTF-8 bytes. */
  maxBytes: number;
  /** Characters allowed, for names the kernel restricts (module names). */
  pattern?: RegExp;
  /** What the pattern allows, in words, for the message. */
  patternText?: string;
}

/** A non-empty name no longer than maxBytes, without NUL or newline, matching the rule's pattern. */
export function name(value: unknown, field: string, rule: NameRule): string {
  const s = string(value, field);
  if (s.length === 0) throw wrongValue(field, 'a non-empty name', s);
  if (Buffer.byteLength(s) > rule.maxBytes) throw outOfRange(field, `at most ${rule.maxBytes} bytes long`, s);
  if (/[\0\n]/.test(s)) throw wrongValue(field, 'a name without NUL or newline', s);
  if (rule.pattern && !rule.pattern.test(s)) throw wrongValue(field, rule.patternText ?? `a name matching ${rule.pattern}`, s);
  return s;
}

const INTERFACE_NAME = /^(?!\.\.?$)[^\s/:]+$/;

/**
 * A network interface name as the kernel takes it (dev_valid_name()): at
 * most `maxBytes` (IFNAMSIZ - 1, from the caller's header), no whitespace,
 * '/' or ':', not '.' or '..'.
 */
export function interfaceName(value: unknown, field: string, maxBytes: number): string {
  return name(value, field, { maxBytes, pattern: INTERFACE_NAME, patternText: "an interface name (no whitespace, '/' or ':', not '.' or '..')" });
}

/** One of a fixed list of strings. */
export function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string, name?: string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw notOneOf(value, allowed, field, name);
}

/** The error for a value that is none of `allowed`: a TypeError, its code saying whether it was a string at all. */
export function notOneOf(value: unknown, allowed: readonly string[], field: string, name?: string): ArgumentTypeError {
  const expected = `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`;
  return typeof value === 'string' ? wrongValue(path(field, name), expected, value) : wrongType(path(field, name), expected, value);
}

/**
 * A key of a constant table (forwarding methods, tunnel types...), as its
 * number. A plain property read, not hasOwnProperty: what an inherited name
 * (`toString`) reads is not a number, so it is refused all the same.
 */
export function tableValue(table: Readonly<Record<string, number>>, value: unknown, field: string, name?: string): number {
  const n = typeof value === 'string' ? table[value] : undefined;
  if (typeof n === 'number') return n;
  throw notOneOf(value, Object.keys(table), field, name);
}

/**
 * Refuses a field the object does not take: a misspelt option
 * (`schedular`) must not be silently ignored. Fields set to undefined are
 * let through (spreading optional values leaves them). for...in allocates
 * nothing: this runs for every operation of a batch. `listed` is what the
 * message names as known, when some known fields are not for callers.
 */
export function knownFields(o: Record<string, unknown>, known: ReadonlySet<string>, field: string, listed: Iterable<string> = known): void {
  for (const k in o) {
    if (!known.has(k) && o[k] !== undefined) {
      throw unknownField(`${field}.${k}`, listed, o[k]);
    }
  }
}

/**
 * knownFields() for objects that come by the thousand with the same
 * fields, as a batch's services and destinations do. It keeps the known
 * keys of the objects it has let through, in for...in order; a key that
 * is the one kept at its place is known without a look-up in the set
 * (property names are interned strings, so that comparison is cheap). Any
 * other key is looked up, so it lets through and refuses exactly what
 * knownFields() does.
 */
export class FieldNames {
  private readonly recent: string[] = [];

  constructor(private readonly known: ReadonlySet<string>) {}

  /** knownFields(o, known, field). */
  check(o: Record<string, unknown>, field: string): void {
    const recent = this.recent;
    let i = 0; // only known keys are kept, so recent[i] is always one
    for (const k in o) {
      if (recent[i] === k) {
        i++;
      } else if (this.known.has(k)) {
        recent[i++] = k;
      } else if (o[k] !== undefined) {
        throw unknownField(`${field}.${k}`, this.known, o[k]);
      }
    }
  }
}
