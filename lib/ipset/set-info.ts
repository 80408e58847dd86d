/**
 * What element operations need to know about a set, and the create spec
 * that reproduces a set, both from its header (or from the spec that
 * would create it).
 */
import type { CreateSpec, SetHeader, SetType } from './types.js';

/** A set as element operations see it: its type, family and which element options it takes. */
export interface SetInfo {
  /** The set's type. */
  type: SetType;
  /** Its family (inet for the types without one). */
  family: 'inet' | 'inet6';
  /** The element options it takes, and its revision. */
  support: {
    timeout: boolean;
    counters: boolean;
    comment: boolean;
    skbinfo: boolean;
    /** The set's revision (0xff: unknown, as for a set not created yet: the parser then takes every option). */
    revision: number;
  };
}

const UNKNOWN_REVISION = 0xff;

/** What element operations need to know about a listed set. */
export function infoFromHeader(h: SetHeader): SetInfo {
  return {
    type: h.type,
    family: h.family ?? 'inet',
    support: { timeout: h.timeout !== undefined, counters: h.counters, comment: h.comment, skbinfo: h.skbinfo, revision: h.revision },
  };
}

/** What element operations need to know about a set that `spec` would create. */
export function infoFromSpec(spec: CreateSpec): SetInfo {
  return {
    type: spec.type,
    family: spec.family ?? 'inet',
    support: {
      timeout: spec.timeout !== undefined,
      counters: spec.counters === true,
      comment: spec.comment === true,
      skbinfo: spec.skbinfo === true,
      revision: UNKNOWN_REVISION,
    },
  };
}

/** "hash:ip inet with timeout, comment" */
export function describeInfo(info: SetInfo): string {
  const options = (['timeout', 'counters', 'comment', 'skbinfo'] as const).filter((k) => info.support[k]);
  return `${info.type} ${info.family}${options.length ? ` with ${options.join(', ')}` : ''}`;
}

/**
 * Create options that reproduce an existing set's settings: every create
 * option the header reports (bitmask, markmask, netmask, initval,
 * bucketSize and forceadd included), nothing of what the kernel keeps
 * about the set.
 */
export function specFromHeader(h: SetHeader): CreateSpec {
  const { name: _name, revision: _revision, references: _references, memSize: _memSize, elements: _elements, index: _index, ...spec } = h;
  return spec;
}
