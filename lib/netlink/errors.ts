/**
 * The error the kernel's refusals, and failures of the conversation with
 * it, come back as.
 *
 * A NetlinkError keeps its parts as properties (the errno and its name, the
 * operation and what it was about, the kernel's own words, the system call
 * that failed) and its message is built from them once, here, as
 * mdlayher/netlink's OpError does: callers read the parts, never the text.
 * Invalid arguments never reach the kernel: they throw the checking
 * module's TypeError / RangeError naming the field (util/check.ts).
 */

/** What a NetlinkError is made of. */
export interface NetlinkErrorInit {
  /** The positive errno. */
  errno: number;
  /** The errno's name (`EEXIST`). */
  code: string;
  /** The method that failed (`addService`, `Ipvs.open`). */
  operation: string;
  /** What the operation was about (a service, destination, set, entry, link...). */
  subject?: unknown;
  /** The kernel's extended-ack text, if it sent one. */
  kernelMessage?: string | undefined;
  /** The system call or step that failed, for failures of the conversation itself. */
  syscall?: string | undefined;
  /** strerror() text for errno. */
  text?: string | undefined;
  /** What this errno means for this operation, in the family's terms. */
  hint?: string | undefined;
  /**
   * What happened, in the library's words, where the errno alone does not
   * say it: how the conversation broke (`no reply from the kernel within
   * 300 ms`), or what the library found (`the Ipvs handle is closed`).
   */
  detail?: string | undefined;
}

/** A refusal by the kernel, or a failure of the conversation with it. */
export class NetlinkError extends Error {
  /** The positive errno (`17`). */
  readonly errno: number;
  /** The errno's name (`EEXIST`), as Node's system errors name it. */
  readonly code: string;
  /** The method that failed (`addService`, `apply`, `Ipvs.open`); in a batch, the op's name. */
  readonly operation: string;
  /** What the operation was about (the service key, destination, set name, entry, link name, namespace path), as the caller passed it; undefined for calls about nothing in particular. */
  readonly subject: unknown;
  /** The kernel's extended-ack text (NLMSGERR_ATTR_MSG), when it sent one. */
  readonly kernelMessage: string | undefined;
  /** The system call or step that failed (`recvmmsg`, `setns`) when the conversation broke rather than the kernel refusing; undefined for a refusal. */
  readonly syscall: string | undefined;
  /** strerror() text for errno (`File exists`), when known. */
  readonly text: string | undefined;
  /** What this errno means for this operation in the family's terms (`no such virtual service`). */
  readonly hint: string | undefined;
  /** What happened in the library's words, where the errno alone does not say it (`no reply from the kernel within 300 ms`). */
  readonly detail: string | undefined;

  constructor(init: NetlinkErrorInit) {
    super(formatNetlinkError(init));
    this.name = 'NetlinkError';
    this.errno = init.errno;
    this.code = init.code;
    this.operation = init.operation;
    this.subject = init.subject;
    this.kernelMessage = init.kernelMessage || undefined;
    this.syscall = init.syscall || undefined;
    this.text = init.text || undefined;
    this.hint = init.hint || undefined;
    this.detail = init.detail || undefined;
  }
}

/**
 * The one place a NetlinkError's message is built:
 * `<operation> <subject> failed: [<syscall>: ]<text> (<code>)[: <detail>][: <hint>][ [kernel: <kernelMessage>]]`.
 */
export function formatNetlinkError(p: NetlinkErrorInit): string {
  const about = p.subject === undefined ? '' : ` ${describe(p.subject)}`;
  const call = p.syscall ? `${p.syscall}: ` : '';
  const what = p.text ? `${p.text} (${p.code})` : p.code;
  const detail = p.detail ? `: ${p.detail}` : '';
  const hint = p.hint ? `: ${p.hint}` : '';
  const kernel = p.kernelMessage ? ` [kernel: ${p.kernelMessage}]` : '';
  return `${p.operation}${about} failed: ${call}${what}${detail}${hint}${kernel}`;
}

function describe(subject: unknown): string {
  if (typeof subject === 'string') return subject;
  try {
    return JSON.stringify(subject, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  } catch {
    return String(subject);
  }
}

/** The shape of the errors the native addon rejects with when the conversation breaks. */
export interface NativeError extends Error {
  /** The positive errno. */
  errno?: number;
  /** The errno's name. */
  code?: string;
  /** The system call or step that failed. */
  syscall?: string;
  /** strerror() text for errno. */
  text?: string;
  /** The addon's account of what happened (`no reply from the kernel within 300 ms`), often empty. */
  detail?: string;
}

/**
 * A failure of the conversation (timeout, socket error, no IPVS) as a
 * NetlinkError, its parts taken over as they are; anything that is not
 * such a failure is returned unchanged.
 */
export function fromNativeFailure(err: unknown, operation: string, subject?: unknown): Error {
  const e = err as NativeError;
  if (!(e instanceof Error) || typeof e.errno !== 'number') return err as Error;
  return new NetlinkError({
    errno: e.errno,
    code: e.code ?? `E${e.errno}`,
    operation,
    subject,
    syscall: e.syscall,
    text: e.text,
    detail: e.detail,
  });
}
