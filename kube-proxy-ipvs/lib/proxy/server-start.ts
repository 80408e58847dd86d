/**
 * kube-proxy's serveHealthz / serveMetrics: a server that cannot listen
 * (the port taken, the address not there yet) is tried again every 5 s,
 * each failure logged, while the proxy runs on; with
 * --bind-address-hard-fail the first failure ends the start instead (the
 * process exits 1).
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.js';

const RETRY_MS = 5000;

export interface ServerStartOptions {
  hardFail: boolean;
  clock: Clock;
  log: Logger;
  /** The log line of a failure, in upstream's words for that server. */
  failed: (err: Error) => { msg: string; fields?: Record<string, unknown> };
}

export class ServerStart {
  private timer?: unknown;
  private cancelled = false;

  constructor(
    private readonly start: () => Promise<string>,
    private readonly opts: ServerStartOptions,
  ) {}

  /** The bound address; undefined when the first try failed and retries go on in the background. */
  async first(): Promise<string | undefined> {
    try {
      return await this.start();
    } catch (err) {
      if (this.opts.hardFail) throw err;
      this.report(err as Error);
      this.schedule();
      return undefined;
    }
  }

  cancel(): void {
    this.cancelled = true;
    if (this.timer !== undefined) this.opts.clock.clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.cancelled) return;
    this.timer = this.opts.clock.setTimeout(() => {
      this.timer = undefined;
      if (this.cancelled) return;
      this.start().then(
        (address) => this.opts.log.info({ address }, 'server listening after retries'),
        (err: Error) => {
          this.report(err);
          this.schedule();
        },
      );
    }, RETRY_MS);
    (this.timer as { unref?: () => void }).unref?.();
  }

  private report(err: Error): void {
    const { msg, fields } = this.opts.failed(err);
    this.opts.log.error({ ...fields, err: err.message }, msg);
  }
}

/** A server to start: none when `bind` is empty. */
export interface ServerSpec {
  bind: string;
  listen: () => Promise<string>;
  failed: ServerStartOptions['failed'];
}

/**
 * Starts each server that has an address, in order, none once `stopped()`;
 * each start is kept in `starts`, whose retries a stop cancels. Returns
 * where each listens (none for one still being retried).
 */
export async function startServers<K extends string>(
  specs: Record<K, ServerSpec>,
  common: Omit<ServerStartOptions, 'failed'>,
  starts: ServerStart[],
  stopped: () => boolean,
): Promise<Partial<Record<K, string>>> {
  const addresses: Partial<Record<K, string>> = {};
  for (const name of Object.keys(specs) as K[]) {
    const { bind, listen, failed } = specs[name];
    if (!bind || stopped()) continue;
    const start = new ServerStart(listen, { ...common, failed });
    starts.push(start);
    addresses[name] = await start.first();
  }
  return addresses;
}
