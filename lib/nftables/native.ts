/**
 * The addon's nf_tables surface (native/nftables/handle.h, events.h): raw messages in
 * the kernel's numbers, field names as in native/nftables/schema_*.cc.
 * Everything above this file speaks in names.
 */
import { native, type HandleOptions, type NativeSocketBuffers, type SocketCounters } from '../netlink/binding.js';

/** One nf_tables message as the addon encodes and decodes it. */
export interface RawMessage {
  /** 'newtable', 'delrule', 'getset', ... */
  type: string;
  /** NFPROTO_*. */
  family: number;
  /** NLM_F_* beyond NLM_F_REQUEST. */
  flags?: number;
  attrs: RawAttrs;
}

/** A message's (or nest's) attributes by field name: numbers, bigints, strings, bytes, nests and lists. */
export type RawAttrs = { [field: string]: RawValue | undefined };
/** One raw attribute value. */
export type RawValue = number | bigint | string | boolean | Uint8Array | RawAttrs | RawValue[];

/** A decoded reply; `resId` holds the low 16 bits of the generation it was read at. */
export interface RawReply extends RawMessage {
  resId: number;
}

/** The kernel's answer to one request. */
export interface NativeOutcome {
  errno: number;
  code: string;
  /** The kernel's extended-ack text, often empty. */
  message: string;
  /** strerror() of errno. */
  text: string;
}

/** What commit() resolves to: the refused messages, and the whole transaction's refusal. */
export interface NativeCommitResult {
  failures: Array<NativeOutcome & { change: number; element: number; path: string }>;
  whole?: NativeOutcome;
  messages: number;
}

/** The native handle (native/nftables/handle.h). */
export interface NativeNftablesHandle extends NativeSocketBuffers {
  open(): Promise<void>;
  commit(changes: RawMessage[], options: { genid?: number }): Promise<NativeCommitResult>;
  query(requests: Array<RawMessage & { dump: boolean }>): Promise<Array<NativeOutcome & { messages: RawReply[] }>>;
  close(): void;
  counters(): SocketCounters;
}

/**
 * One announcement read from nf_tables' multicast group: a message as a
 * dump's reply, with the committing socket's port id and the message's
 * NLM_F_* flags; or a gap where the
 * kernel dropped some; or a message type the addon has no schema for.
 */
export type RawEvent = (RawReply & { portId: number; flags: number }) | { overrun: true } | { unknown: number; portId: number };

/** The native event reader (native/nftables/events.h). */
export interface NativeNftablesEvents {
  open(): Promise<void>;
  /** Everything read since the last call; `error` once the socket failed. */
  take(): { events: RawEvent[]; error?: unknown };
  close(): void;
}

interface NftablesAddon {
  NftablesHandle: new (opts: HandleOptions) => NativeNftablesHandle;
  NftablesEvents: new (opts: HandleOptions & { maxQueued: number }, onReadable: () => void) => NativeNftablesEvents;
  nftablesConstants: Record<string, number>;
  nftEncode(changes: RawMessage[], options: { genid?: number }): Buffer[];
  nftDecode(message: Buffer): RawReply;
  nftAttrPath(message: Buffer, offset: number): { path: string; item: number };
}

/** The addon, seen through its nf_tables surface. */
export const addon = native as unknown as NftablesAddon;
/** The uapi constants, as the compiler saw them. */
export const K = addon.nftablesConstants;
