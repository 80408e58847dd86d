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
  /** What the tool printed (fixtures captured since it was recorded). */
  stdout?: string;
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

/** One service of an `ipvsadm -L` listing: its line and its destinations' lines, split into words. */
export interface IpvsadmBlock {
  service: string[];
  /** Each destination line's words after "->". */
  destinations: string[][];
}

/** Splits an `ipvsadm -L` listing (any column set) into services and their destinations. */
export function parseIpvsadmList(text: string): IpvsadmBlock[] {
  const blocks: IpvsadmBlock[] = [];
  for (const line of text.split('\n')) {
    if (/^(TCP|UDP|SCTP|FWM) /.test(line)) blocks.push({ service: line.trim().split(/\s+/), destinations: [] });
    else if (/^ {2}-> /.test(line) && !line.includes('RemoteAddress:Port')) {
      if (blocks.length === 0) throw new Error(`a destination line before any service: ${line}`);
      blocks[blocks.length - 1].destinations.push(line.trim().split(/\s+/).slice(1));
    }
  }
  return blocks;
}

/** "10.0.0.1:80" / "[fd00::1]:443" -> address and port. */
export function splitHostPort(text: string): { address: string; port: number } {
  const m = /^\[(.*)\]:(\d+)$/.exec(text) ?? /^([^:]*):(\d+)$/.exec(text);
  if (!m) throw new Error(`not HOST:PORT: ${text}`);
  return { address: m[1], port: Number(m[2]) };
}
