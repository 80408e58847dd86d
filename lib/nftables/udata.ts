/**
 * Userdata: the type-length-value records nft keeps in NFTA_*_USERDATA
 * (comments, a set's key byte order and type expression). The kernel
 * stores them untouched; nft reads them to print comments and set types, so
 * writing them the way nft does is what makes `nft list` show our objects
 * as if nft had made them. Record numbers are libnftnl's (udata.h), which
 * no kernel header has.
 */

/** libnftnl's record numbers (enum nftnl_udata_*_types). */
export const UDATA = {
  /** Table, chain, rule and element comments are each their kind's record 0. */
  COMMENT: 0,
  SET_KEYBYTEORDER: 0,
  SET_DATABYTEORDER: 1,
  SET_MERGE_ELEMENTS: 2,
  SET_KEY_TYPEOF: 3,
  SET_DATA_TYPEOF: 4,
  SET_EXPR: 5,
  SET_DATA_INTERVAL: 6,
  SET_COMMENT: 7,
  SET_TYPEOF_EXPR: 0,
  SET_TYPEOF_DATA: 1,
  /** An element's flags record (after its comment), and its one flag: an interval with no end element, running to the top. */
  ELEM_FLAGS: 1,
  ELEM_F_INTERVAL_OPEN: 1,
} as const;

/** One userdata record. */
export interface Record_ {
  type: number;
  value: Buffer;
}

/** Appends one record; values longer than 255 bytes do not fit one. */
export function record(type: number, value: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([type, value.length]), value]);
}

/** A NUL-terminated string record (comments). */
export function stringRecord(type: number, text: string): Buffer {
  return record(type, Buffer.concat([Buffer.from(text), Buffer.from([0])]));
}

/** A 32-bit record in host byte order, as nftnl_udata_put_u32 writes it. */
export function u32Record(type: number, value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value >>> 0);
  return record(type, b);
}

/** The records of a userdata blob; a truncated tail is ignored, as nft does. */
export function parseRecords(data: Uint8Array | undefined): Record_[] {
  const out: Record_[] = [];
  if (!data) return out;
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  for (let at = 0; at + 2 <= b.length; ) {
    const len = b[at + 1];
    if (at + 2 + len > b.length) break;
    out.push({ type: b[at], value: b.subarray(at + 2, at + 2 + len) });
    at += 2 + len;
  }
  return out;
}

/** The comment record of a table, chain, rule or element, if any. */
export function commentOf(data: Uint8Array | undefined, type: number = UDATA.COMMENT): string | undefined {
  const r = parseRecords(data).find((x) => x.type === type);
  if (!r) return undefined;
  const end = r.value.indexOf(0);
  return r.value.subarray(0, end < 0 ? r.value.length : end).toString();
}

/** A 32-bit record's value, if present. */
export function u32Of(data: Uint8Array | undefined, type: number): number | undefined {
  const r = parseRecords(data).find((x) => x.type === type);
  return r && r.value.length === 4 ? r.value.readUInt32LE(0) : undefined;
}
