/**
 * The expression vocabulary rules are built from, one entry per kernel
 * expression: each converts between the typed form (names for the
 * kernel's numbers) and the addon's raw attributes, checking every field
 * on the way in.
 */
import { object, oneOf, wrongType } from '../../util/check.js';
import type { RawAttrs } from '../native.js';
import * as actions from './actions.js';
import { bytes } from './fields.js';
import * as compare from './compare.js';
import * as load from './load.js';
import * as generators from './generators.js';
import * as stateful from './stateful.js';

export type { PayloadExpr, MetaExpr, CtExpr, FibExpr } from './load.js';
export type { CmpExpr, RangeExpr, BitwiseExpr, ByteorderExpr, LookupExpr, DynsetExpr } from './compare.js';
export type {
  VerdictExpr, ImmediateExpr, CounterExpr, NatExpr, MasqueradeExpr, RedirectExpr, RejectExpr, NotrackExpr, LogExpr,
} from './actions.js';
export type { LimitExpr, QuotaExpr, ObjrefExpr, NamedObjref, MappedObjref } from './stateful.js';
export type { NumgenExpr, HashExpr } from './generators.js';

/** An expression the kernel has that this library has no vocabulary for: kept as read, so a rule with it can be written back. */
export interface RawExpr {
  /** Marks an expression kept as raw bytes. */
  type: 'raw';
  /** The kernel's name for it ("exthdr", "connlimit", ...). */
  name: string;
  /** Its NFTA_EXPR_DATA attributes, as bytes. */
  data: Uint8Array;
}

/** One step of a rule. */
export type Expression =
  | load.PayloadExpr | load.MetaExpr | load.CtExpr | load.FibExpr
  | compare.CmpExpr | compare.RangeExpr | compare.BitwiseExpr | compare.ByteorderExpr | compare.LookupExpr | compare.DynsetExpr
  | actions.VerdictExpr | actions.ImmediateExpr | actions.CounterExpr | actions.NatExpr | actions.MasqueradeExpr
  | actions.RedirectExpr | actions.RejectExpr | actions.NotrackExpr | actions.LogExpr
  | stateful.LimitExpr | stateful.QuotaExpr | stateful.ObjrefExpr
  | generators.NumgenExpr | generators.HashExpr
  | RawExpr;

interface Codec {
  kernel: string;
  toRaw(e: never, field: string): RawAttrs;
  fromRaw(a: RawAttrs): Expression;
}

const byType: Record<Exclude<Expression['type'], 'raw'>, Codec> = {
  payload: load.payload, meta: load.meta, ct: load.ct, fib: load.fib,
  cmp: compare.cmp, range: compare.range, bitwise: compare.bitwise, byteorder: compare.byteorder,
  lookup: compare.lookup, dynset: compare.dynset,
  verdict: actions.immediate, immediate: actions.immediate, counter: actions.counter, nat: actions.nat,
  masquerade: actions.masquerade, redirect: actions.redirect, reject: actions.reject, notrack: actions.notrack,
  log: actions.log, limit: stateful.limit, quota: stateful.quota, objref: stateful.objref,
  numgen: generators.numgen, hash: generators.hash,
};
const byKernel = new Map<string, Codec>(Object.values(byType).map((c) => [c.kernel, c]));
const types = [...Object.keys(byType), 'raw'];

/**
 * The addon's form of an expression: `{ type: kernel name, ...attributes }`. Throws naming the field on bad input.
 * @internal
 */
export function expressionToRaw(e: unknown, field: string): RawAttrs {
  const o = object(e, field);
  const type = oneOf(o.type, types, field, 'type');
  if (type === 'raw') {
    if (typeof o.name !== 'string' || o.name === '') throw wrongType(`${field}.name`, "the kernel's name for the expression", o.name);
    return { type: o.name, raw: bytes(o.data, `${field}.data`, 65535) };
  }
  const c = byType[type as keyof typeof byType];
  return { type: c.kernel, ...c.toRaw(o as never, field) };
}

/**
 * The typed form of an expression the addon decoded.
 * @internal
 */
export function expressionFromRaw(a: RawAttrs): Expression {
  const c = byKernel.get(a.type as string);
  if (!c || a.raw !== undefined) return { type: 'raw', name: a.type as string, data: Buffer.from((a.raw as Uint8Array | undefined) ?? []) };
  return c.fromRaw(a);
}
