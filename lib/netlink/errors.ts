/**
 * Errors the library raises.
 *
 * A NetlinkError is the kernel (or the conversation with it) saying no: it
 * carries the errno, its name as `code`, the operation that failed and the
 * object it was about. Invalid arguments never reach the kernel: they throw
 * TypeError / RangeError naming the field.
 */

export interface NetlinkErrorInit {
  errno: number;
  code: string;
  operation: string;
  /** What the operation was about (a service, destination, set, entry...). */
  subject?: unknown;
  /** The kernel's extended-ack text, if it sent one. */
  kernelMessage?: string;
  /** The system call or step that failed, for failures of the conversation itself. */
  syscall?: string;
  /** strerror() text for errno. */
  text?: string;
  /** What this errno means for this operation, in the family's terms. */
  hint?: string;
  message?: string;
}

export class NetlinkError extends Error {
  readonly errno: number;
  readonly code: string;
  readonly operation: string;
  readonly subject: unknown;
  readonly kernelMessage: string | undefined;
  readonly syscall: string | undefined;

  constructor(init: NetlinkErrorInit) {
    super(init.message ?? defaultMessage(init));
    this.name = 'NetlinkError';
    this.errno = init.errno;
    this.code = init.code;
    this.operation = init.operation;
    this.subject = init.subject;
    this.kernelMessage = init.kernelMessage || undefined;
    this.syscall = init.syscall;
  }
}

function defaultMessage(init: NetlinkErrorInit): string {
  const about = init.subject === undefined ? '' : ` ${describe(init.subject)}`;
  const text = init.text ? `${init.text} (${init.code})` : init.code;
  const hint = init.hint ? `: ${init.hint}` : '';
  const kernel = init.kernelMessage ? ` [kernel: ${init.kernelMessage}]` : '';
  return `${init.operation}${about} failed: ${text}${hint}${kernel}`;
}

function describe(subject: unknown): string {
  if (typeof subject === 'string') return subject;
  try {
    return JSON.stringify(subject, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  } catch {
    return String(subject);
  }
}

/** The shape of errors the native addon rejects with. */
export interface NativeError extends Error {
  errno?: number;
  code?: string;
  syscall?: string;
}

/** Wraps a failure of the conversation (timeout, socket error, no IPVS). */
export function fromNativeFailure(err: unknown, operation: string, subject?: unknown): Error {
  const e = err as NativeError;
  if (!(e instanceof Error) || typeof e.errno !== 'number') return err as Error;
  return new NetlinkError({
    errno: e.errno,
    code: e.code ?? `E${e.errno}`,
    operation,
    subject,
    syscall: e.syscall,
    message: `${operation} failed: ${e.message}`,
  });
}
