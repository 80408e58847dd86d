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
 *   field the object does not have).
 * - RangeError, code ERR_OUT_OF_RANGE: a number, or a length, outside what
 *   the field takes; a number that is not an integer where one is needed
 *   (1.5 for a port) is out of range too.
 *
 * Each error keeps its parts (`field`, `code`, and for the last kind the
 * allowed range) and formats its message once, here.
 *
 * Hot paths (a batch of a hundred thousand operations) pass the field as
 * two parts, `field` and `name`, so the full name is built only for a
 * value that is refused.
 */

export type CheckCode = 'ERR_INVALID_ARG_TYPE' | 'ERR_INVALID_ARG_VALUE' | 'ERR_OUT_OF_RANGE';

/** A bad argument: TypeError with its field and code. */
export class ArgumentTypeError extends TypeError {
  readonly code: Exclude<CheckCode, 'ERR_OUT_OF_RANGE'>;
  /** The argument's path, as the caller wrote it (`ops[3].destination.port`). */
  readonly field: string;
  /** What the field takes, in words. */
  readonly expected: string;
  readonly value: unknown;

  constructor(code: Exclude<CheckCode, 'ERR_OUT_OF_RANGE'>, field: string, expected: string, value: unknown, message?: string) {
    super(message ?? `${field} must be ${expected}, got ${describeValue(value)}`);
    this.name = 'TypeError';
    this.code = code;
    this.field = field;
    this.expected = expected;
    this.value = value;
  }
}

/** A number or length outside the field's range: RangeError with its field and bounds. */
export class ArgumentRangeError extends RangeError {
  readonly code = 'ERR_OUT_OF_RANGE' as const;
  readonly field: string;
  readonly expected: string;
  readonly value: unknown;

  constructor(field: string, expected: string, value: unknown) {
    super(`${field} must be ${expected}, got ${describeValue(value)}`);
    this.name = 'RangeError';
    this.field = field;
    this.expected = expected;
    this.value = value;
  }
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

/** A field the object does not take. */
export function unknownField(field: string, known: Iterable<string>, value: unknown): ArgumentTypeError {
  const list = [...known].join(', ');
  return new ArgumentTypeError('ERR_INVALID_ARG_VALUE', field, `one of the fields it takes (${list})`, value, `${field} is not a field it takes (known: ${list})`);
}

/** The number (or length) is outside the field's range. */
export function outOfRange(field: string, expected: string, value: unknown): ArgumentRangeError {
  return new ArgumentRangeError(field, expected, value);
}

/** An integer from min to max inclusive. */
export function integer(value: unknown, field: string, min: number, max: number, name?: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  if (typeof value !== 'number') throw wrongType(path(field, name), 'an integer', value);
  throw outOfRange(path(field, name), `an integer from ${min} to ${max}`, value);
}

/** integer() when the value may be absent: `fallback` for undefined. */
export function optionalInteger(value: unknown, field: string, min: number, max: number, fallback: number, name?: string): number {
  return value === undefined ? fallback : integer(value, field, min, max, name);
}

export function port(value: unknown, field: string, name?: string): number {
  return integer(value, field, 0, 65535, name);
}

/** A boolean; undefined is refused (use optionalBoolean for a field that may be left out). */
export function boolean(value: unknown, field: string, name?: string): boolean {
  if (typeof value === 'boolean') return value;
  throw wrongType(path(field, name), 'a boolean', value);
}

export function optionalBoolean(value: unknown, field: string, fallback: boolean, name?: string): boolean {
  return value === undefined ? fallback : boolean(value, field, name);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A plain object (not null, not an array). */
export function object(value: unknown, field: string): Record<string, unknown> {
  if (isObject(value)) return value;
  throw wrongType(field, 'an object', value);
}

export function string(value: unknown, field: string, name?: string): string {
  if (typeof value === 'string') return value;
  throw wrongType(path(field, name), 'a string', value);
}

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

/** One of a fixed list of strings. */
export function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string, name?: string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  const expected = `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`;
  if (typeof value !== 'string') throw wrongType(path(field, name), expected, value);
  throw wrongValue(path(field, name), expected, value);
}

/** A key of a constant table (forwarding methods, tunnel types...), as its number. */
export function tableValue(table: Readonly<Record<string, number>>, value: unknown, field: string, name?: string): number {
  if (typeof value === 'string' && Object.prototype.hasOwnProperty.call(table, value)) return table[value];
  return oneOf(value, Object.keys(table), field, name) as never; // throws
}

/**
 * Refuses a field the object does not take: a misspelt option
 * (`schedular`) must not be silently ignored. Fields set to undefined are
 * let through (spreading optional values leaves them). for...in allocates
 * nothing: this runs for every operation of a batch.
 */
export function knownFields(o: Record<string, unknown>, known: ReadonlySet<string>, field: string): void {
  for (const k in o) {
    if (!known.has(k) && o[k] !== undefined) {
      throw unknownField(`${field}.${k}`, known, o[k]);
    }
  }
}
