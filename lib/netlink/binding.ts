/**
 * Loads the native addon (a prebuild when one fits, else the local build)
 * and describes its surface. Everything that talks to the kernel lives there.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** What a client's socket has done since it was opened, for benchmarks and metrics. */
export interface SocketCounters {
  /** sendmsg() system calls, one per batch of requests (retries after EINTR included). */
  sendmsgCalls: number;
  /** recvmmsg() system calls, including the last one of each read that found nothing more. */
  recvCalls: number;
  /** Netlink messages sent (a batch of requests counts each one). */
  messagesSent: number;
  /** Netlink messages received from the kernel: replies, dump parts, acknowledgements and errors. */
  messagesReceived: number;
  /** Dumps the kernel marked interrupted (NLM_F_DUMP_INTR) and that were read again. */
  dumpsRestarted: number;
}

export interface HandleOptions {
  netns?: string;
  timeoutMs?: number;
  /** Tests only: this many sockets drop every reply once opened (simulates a kernel that never answers). */
  testDeafSockets?: number;
  /** Tests only: the receive buffer to ask for (bytes), and whether to send without regard to it (to show ENOBUFS). */
  testRcvbuf?: number;
  testIgnoreBudget?: boolean;
}

/** The memory every native handle's socket can give back once its caller is idle. */
export interface NativeSocketBuffers {
  /**
   * The caller is idle: the socket's receive slots and send buffer past
   * their small everyday size are given back. Returns the bytes of what was
   * given back (0 when nothing had grown, or while a call runs).
   */
  releaseBuffers(): number;
  /** Tests only: the socket's buffers resident now, in bytes (0 while a call runs). */
  testBufferResidency(): number;
}

/** What every native per-op result carries: errno 0 means success. */
export interface NativeResult {
  errno: number;
  code: string;
  /** The kernel's extended-ack text, often empty. */
  message: string;
  /** strerror() of errno. */
  text: string;
}

/** What an IPVS batch resolves to (see lib/ipvs/reply-reader.ts). */
export interface NativeIpvsReplies {
  failures: Array<{ index: number; errno: number; code: string; message: string; text: string; syscall?: string }>;
  records: ArrayBuffer;
  strings: string[];
}

export interface NativeIpvsHandle extends NativeSocketBuffers {
  open(): Promise<number>;
  /** Request records (lib/ipvs/request-writer.ts), their count, and the strings they name. */
  execute(records: Uint8Array, count: number, strings: string[]): Promise<NativeIpvsReplies>;
  /**
   * Every service, then each one's destinations, in one job. With
   * `onChunk`, finished records are handed over in chunks as they come
   * (each a view detached once the call returns, with the strings it
   * introduces); the result carries the rest.
   */
  dump(onChunk?: (records: ArrayBuffer, strings: string[]) => void): Promise<NativeIpvsReplies>;
  /**
   * The last call's records have been read and no call follows at once:
   * their view is detached, and a big reply's memory given back, now.
   * Returns the reply memory the handle keeps for its next call, in bytes
   * (0 while a call is writing into it).
   */
  releaseReplies(): number;
  close(): void;
  counters(): SocketCounters;
  familyId(): number;
}

/** What an ipset request resolved to: errno 0 means success. */
export interface NativeIpsetResult {
  errno: number;
  code: string;
  message: string;
  kernelMessage?: string;
}

export interface NativeIpsetProtocol {
  version: number;
  min: number;
  kernel: number;
}

export interface NativeIpsetHandle extends NativeSocketBuffers {
  open(): Promise<NativeIpsetProtocol>;
  protocol(): NativeIpsetProtocol;
  command(op: object): Promise<NativeIpsetResult>;
  list(op: { name?: string; mode: 'full' | 'header' | 'names' }): Promise<
    NativeIpsetResult & { sets: Array<Record<string, unknown>> }
  >;
  /** Parses `entries` synchronously (throws TypeError/RangeError), then sends. */
  elements(op: object): Promise<NativeIpsetResult & { applied: number; index: number; messages: number }>;
  close(): void;
  counters(): SocketCounters;
}

export interface NativeRtnlHandle extends NativeSocketBuffers {
  open(): Promise<void>;
  execute(ops: object[]): Promise<Array<NativeResult & Record<string, unknown>>>;
  close(): void;
  counters(): SocketCounters;
}

export interface NativeAddon {
  RtnlHandle: new (opts: HandleOptions) => NativeRtnlHandle;
  /** Constants from <net/if.h> and <linux/if_addr.h>, as the compiler saw them. */
  rtnlConstants: { IFNAMSIZ: number; IFA_F_NODAD: number };
  IpvsHandle: new (opts: HandleOptions) => NativeIpvsHandle;
  /** Constants from <linux/ip_vs.h> and libc, as the compiler saw them. */
  ipvsConstants: Record<string, number>;
  /** Field offsets of the IPVS request and reply records (native/ipvs/records.h). */
  ipvsRecordLayout: Record<string, Record<string, number>>;
  /** Tests: request records to the messages the socket would send, one per request. */
  ipvsEncode(records: Uint8Array, count: number, strings: string[], familyId: number): Buffer[];
  /** Tests: one kernel message to reply records. */
  ipvsDecode(msg: Buffer, defaultAf?: number): NativeIpvsReplies & { cmd: number };
  IpsetHandle: new (opts: HandleOptions) => NativeIpsetHandle;
  ipsetConstants: Record<string, number> & { setTypes: string[] };
  ipsetEncode(op: object): Buffer[];
  ipsetDecodeList(msgs: Buffer[]): Array<Record<string, unknown>>;
  ipsetDecodeReply(msg: Buffer, kind: 'protocol' | 'type'): Record<string, number>;
  ipsetEchoedLineno(echo: Buffer): number;
  ipsetCanonical(type: string, family: string, text: string): string;
  ipsetDescribeError(errno: number, cmd: number, type?: string): { code: string; message: string };
  /** Tests: bytes malloc has handed out and not taken back (glibc mallinfo2). */
  mallocInUse(): number;
  /** malloc_trim(0): the C heap's free pages back to the kernel; true when any were. */
  trimMalloc(): boolean;
  /** mallopt(M_MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD), both `bytes`: true when glibc took both. */
  pinMallocThresholds(bytes: number): boolean;
  /** A zeroed buffer of `bytes` in 2 MiB-aligned memory advised for huge pages, unmapped when collected (lib/netlink/large-buffer.ts). */
  largeBuffer(bytes: number): ArrayBuffer;
  [key: string]: unknown;
}

const require = createRequire(import.meta.url);

/** The package root: the nearest folder above this file with binding.gyp. */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'binding.gyp'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('ipvs-netlink: cannot find the package root (binding.gyp)');
    dir = up;
  }
  return dir;
}
const root = packageRoot();

function load(): NativeAddon {
  try {
    // An explicit addon file, for a sanitizer build kept apart from
    // build/Release (scripts/asan-test.sh).
    const override = process.env.IPVS_NETLINK_ADDON;
    if (override) return require(path.resolve(override)) as NativeAddon;
    return require('node-gyp-build')(root) as NativeAddon;
  } catch (err) {
    const why = (err as Error).message;
    throw new Error(
      `ipvs-netlink: the native addon could not be loaded (${why}). ` +
        `It needs Linux and Node.js 22.12 or newer. The package carries binaries for x64 and arm64 with glibc 2.34 or newer; ` +
        `elsewhere build it from source with "npm explore ipvs-netlink -- npm run build:native" ` +
        `(needs python3, make and a C++ compiler).`,
      { cause: err },
    );
  }
}

export const native: NativeAddon = load();
