/**
 * Golden fixtures captured from the real tools (see test/fixtures/README.md):
 * loading them and splitting their datagrams into netlink messages.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export interface Fixture {
  command: string;
  setup?: string[];
  sent: string[];
  received: string[];
}

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

export function loadFixture(tool: string, name: string): Fixture {
  return JSON.parse(readFileSync(path.join(dir, tool, `${name}.json`), 'utf8')) as Fixture;
}

export interface RawMessage {
  type: number;
  flags: number;
  bytes: Buffer;
}

/** Splits hex datagrams into netlink messages. */
export function messages(hexDatagrams: string[]): RawMessage[] {
  const out: RawMessage[] = [];
  for (const hex of hexDatagrams) {
    const buf = Buffer.from(hex, 'hex');
    let at = 0;
    while (at + 16 <= buf.length) {
      const len = buf.readUInt32LE(at);
      if (len < 16 || at + len > buf.length) throw new Error(`bad netlink length ${len} at ${at}`);
      out.push({ type: buf.readUInt16LE(at + 4), flags: buf.readUInt16LE(at + 6), bytes: buf.subarray(at, at + len) });
      at += (len + 3) & ~3;
    }
  }
  return out;
}

/** A copy with nlmsg_seq and nlmsg_pid zeroed: they differ between any two runs. */
export function withoutSeqPid(msg: Buffer): Buffer {
  const b = Buffer.from(msg);
  b.writeUInt32LE(0, 8);
  b.writeUInt32LE(0, 12);
  return b;
}

export const GENL_ID_CTRL = 0x10;
