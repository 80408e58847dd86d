/**
 * Events about this node, posted as kube-proxy's recorder posts them
 * (client-go's tools/events, which kube-proxy's server builds with
 * reportingController "kube-proxy"): an events.k8s.io/v1 Event in the
 * namespace default (a Node has none), named <node>.<the time in
 * nanoseconds, hex>, regarding {kind: Node, name, uid: the node's name},
 * reportingInstance kube-proxy-<hostname>. `kubectl describe node` lists
 * them, with kube-proxy's "Starting" among them.
 *
 * As client-go's broadcaster (recordEvent), a write is tried up to 12
 * times, 10 s apart, while the server cannot be reached, and given up at
 * once when it answers with an error status (say, 403: no RBAC permission
 * to create events) or the request cannot be made; each failure is logged
 * with client-go's words. Nothing waits for it; close() (the proxy's stop)
 * ends a write under way and its retries.
 */
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { Logger } from 'pino';
import { apiRequest, statusError } from './api-list.js';

export interface NodeEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note?: string;
}

/** Where the proxy's events go; the manifests source has none. */
export interface EventRecorder {
  record(e: NodeEvent): void;
  close(): void;
}

type Outcome = 'ok' | { err: Error; log: 'Server rejected event (will not retry!)' | 'Unable to construct event (will not retry!)' | 'Unable to write event (may retry after sleeping)' };

const MAX_TRIES = 12;
const RETRY_MS = 10_000;

export class ApiEvents implements EventRecorder {
  private readonly closing = new AbortController();

  constructor(
    private readonly kc: KubeConfig,
    private readonly nodeName: string,
    private readonly log: Pick<Logger, 'error'>,
    private readonly retryMs = RETRY_MS,
    private readonly host = hostname(),
  ) {}

  record(e: NodeEvent): void {
    if (!this.closing.signal.aborted) void this.write(eventObject(e, this.nodeName, `kube-proxy-${this.host}`, new Date()), 1);
  }

  close(): void {
    this.closing.abort();
  }

  private async write(event: Record<string, unknown>, attempt: number): Promise<void> {
    const outcome = await this.post(event);
    if (outcome === 'ok' || this.closing.signal.aborted) return;
    const fields = { err: outcome.err.message, event: { name: (event.metadata as { name: string }).name, reason: event.reason } };
    const retry = outcome.log === 'Unable to write event (may retry after sleeping)';
    if (retry && attempt >= MAX_TRIES) return void this.log.error(fields, 'Unable to write event (retry limit exceeded!)');
    this.log.error(fields, outcome.log);
    if (!retry) return;
    const timer = setTimeout(() => void this.write(event, attempt + 1), this.retryMs);
    timer.unref();
    this.closing.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  }

  private post(event: Record<string, unknown>): Promise<Outcome> {
    const path = `/apis/events.k8s.io/v1/namespaces/${(event.metadata as { namespace: string }).namespace}/events`;
    return new Promise((resolve) => {
      // No answer (a refused connection, a reset): client-go holds on and tries again.
      const unanswered = (err: Error) => resolve({ err, log: 'Unable to write event (may retry after sleeping)' });
      apiRequest(
        this.kc,
        path,
        {},
        this.closing.signal,
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            // Any error status is a StatusError to client-go: the request itself is bad, so it gives up.
            if (status >= 200 && status < 300) resolve('ok');
            else resolve({ err: statusError(status, Buffer.concat(chunks).toString('utf8')), log: 'Server rejected event (will not retry!)' });
          });
          res.on('error', unanswered);
        },
        unanswered,
        { method: 'POST', json: JSON.stringify(event) },
        // The credentials could not be applied: made the same way next time, so not tried again.
      ).catch((err: Error) => resolve({ err, log: 'Unable to construct event (will not retry!)' }));
    });
  }
}

/** The Event client-go's recorder makes (makeEvent), as its JSON: empty fields left out. */
export function eventObject(e: NodeEvent, nodeName: string, reportingInstance: string, at: Date): Record<string, unknown> {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${nodeName}.${(BigInt(at.getTime()) * 1_000_000n).toString(16)}`, namespace: 'default' },
    // metav1.MicroTime: RFC 3339 with six digits of fraction.
    eventTime: at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
    reportingController: 'kube-proxy',
    reportingInstance,
    action: e.action,
    reason: e.reason,
    regarding: { kind: 'Node', name: nodeName, uid: nodeName },
    ...(e.note ? { note: e.note } : {}),
    type: e.type,
  };
}
