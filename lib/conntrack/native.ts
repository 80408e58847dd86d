/**
 * The addon's conntrack surface (native/conntrack/handle.h), as the typed
 * client calls it.
 */
import { native, type HandleOptions, type NativeResult, type NativeSocketBuffers, type SocketCounters } from '../netlink/binding.js';
import type { NativeRecords } from './records.js';
import type { NativeFilter, NativeKey } from './validate.js';

/** A delete the kernel refused, or whose answer never came (`syscall` set). */
export interface NativeDeleteFailure extends NativeResult {
  index: number;
  syscall?: string;
}

export interface NativeDeleteResult {
  deleted: number;
  failures: NativeDeleteFailure[];
}

export interface NativeConntrackHandle extends NativeSocketBuffers {
  open(): Promise<void>;
  list(filter: NativeFilter): Promise<NativeRecords & { dumpRetries: number }>;
  get(key: NativeKey): Promise<NativeRecords & { errno: number; code: string; message: string }>;
  delete(keys: NativeKey[]): Promise<NativeDeleteResult>;
  deleteMatching(filter: NativeFilter): Promise<NativeRecords & NativeDeleteResult>;
  flush(family: number): Promise<void>;
  stats(): Promise<Record<string, unknown>>;
  close(): void;
  counters(): SocketCounters;
}

export interface NativeEventOptions extends HandleOptions {
  groups: number;
  filter: NativeFilter;
  maxQueued?: number;
}

export interface NativeConntrackEvents {
  open(): Promise<void>;
  /** Everything read since the last call; `error` once the socket failed. */
  take(): NativeRecords & { error?: Error & { errno?: number; code?: string; syscall?: string } };
  close(): void;
}

const addon = native as unknown as {
  ConntrackHandle: new (options: HandleOptions) => NativeConntrackHandle;
  ConntrackEvents: new (options: NativeEventOptions, onReadable: () => void) => NativeConntrackEvents;
};

export const ConntrackHandle = addon.ConntrackHandle;
export const ConntrackEvents = addon.ConntrackEvents;
