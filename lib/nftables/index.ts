/** nf_tables over nfnetlink: the Nftables client, its types and errors. */
export { Nftables, type ListFilter, type ObjectFilter } from './client.js';
export { NftablesTransactionError, GenerationChangedError, type RefusedChange } from './errors.js';
export type * from './types.js';
export type { Family as NftFamily, Hook, Policy, SetFlag, SetPolicy, TableFlag, VerdictCode } from './names.js';
export type {
  BitwiseOp, ByteorderOp, CmpOp, CsumType, CtDirection, CtKey, DynsetOp, FibFlag, FibResult, HashType, LimitType, MetaKey,
  NatFlag, NatType, NumgenType, ObjectType, PayloadBase, RangeOp, RejectType,
} from './names.js';
export type * from './expressions/index.js';
export { dataTypes } from './datatypes.js';
export { formatRule, type FormatOptions } from './format.js';
export { rulesetChanges } from './ruleset-changes.js';
export {
  NftablesEventStream, type NftablesEvent, type NftablesChangeEvent, type NftablesCommitEvent, type NftablesOverrunEvent,
  type NftablesUnknownEvent, type EventOptions as NftEventOptions,
} from './events.js';
