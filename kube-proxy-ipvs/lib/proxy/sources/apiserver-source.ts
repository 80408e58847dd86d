/**
 * Services, EndpointSlices (discovery.k8s.io/v1) and this node's Node from
 * an API server: for each, an Informer (informer.ts: list, then watch from
 * the list's resourceVersion; a 410 Gone relists (after the backoff below,
 * as client-go's reflector waits its own) and the differences,
 * deletions included, come as events), its lists through listObjects
 * (api-list.ts) and its watches through watchObjects (api-watch.ts), both
 * with the credentials of client-node's KubeConfig.
 *
 * An informer stops on any other error (a refused connection, a 500, a
 * failed list). This module owns the restart policy: each informer is
 * restarted after a backoff of 1 s doubling to 30 s, the delay resetting
 * once it has stayed up for a minute. A watch the server simply closes is
 * resumed by the informer itself, from the last resourceVersion, so nothing
 * is missed.
 *
 * Every object passes through an ObjectGate (object-gate.ts): one that
 * fails validation is logged and skipped (or, for an update, the last good
 * version stays), and the others carry on.
 */
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { KubernetesObject } from '@kubernetes/client-node/dist/types.js';
import type { Logger } from 'pino';
import { listObjects } from './api-list.js';
import { apiWatcher } from './api-watch.js';
import { Informer } from './informer.js';
import { ObjectGate } from './object-gate.js';
import type { Source, SourceEvent, SourceHandlers } from './source.js';

export interface ApiServerSourceOptions {
  kubeconfig: KubeConfig;
  nodeName: string;
  logger: Logger;
  /** How long the first list may take before start-up gives up. */
  initialListTimeoutMs?: number;
  /** The informers' resync period (ConfigSyncPeriod): each time, handlers.resync(); none when absent. */
  resyncPeriodMs?: number;
  backoff?: { initialMs: number; maxMs: number };
}

type Kind = SourceEvent['kind'];

/**
 * Each informer's name in kube-proxy's start-up lines ("Starting service
 * config controller", client-go's "Waiting for caches to sync" and "Caches
 * are synced" with controller="service config"), which operators grep for.
 * kube-proxy also watches ServiceCIDRs ("serviceCIDR config") for its
 * nftables mode; this proxy does not read them.
 */
const CONTROLLER: Record<Kind, string> = { Service: 'service config', EndpointSlice: 'endpoint slice config', Node: 'node config' };

/** kube-proxy skips objects another proxy implementation claims, and headless services. */
const SERVICE_SELECTOR = '!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless';

interface Watched {
  kind: Kind;
  informer: Informer;
  listed: boolean;
  delayMs: number;
  startedAt: number;
  restartTimer?: NodeJS.Timeout;
  /** The last failure, for start-up's explanation. */
  lastError?: unknown;
}

export class ApiServerSource implements Source {
  readonly description: string;
  private readonly watched: Watched[] = [];
  private stopped = false;
  private handlers?: SourceHandlers;
  private readonly backoff: { initialMs: number; maxMs: number };
  private readonly gate: ObjectGate;
  private resyncTimer?: NodeJS.Timeout;

  constructor(private readonly options: ApiServerSourceOptions) {
    this.description = `API server ${options.kubeconfig.getCurrentCluster()?.server ?? '?'}`;
    this.backoff = options.backoff ?? { initialMs: 1000, maxMs: 30_000 };
    this.gate = new ObjectGate(() => this.handlers, options.logger);
  }

  async start(handlers: SourceHandlers): Promise<void> {
    // A stop that came first leaves nothing to start (no informer would be stopped again).
    if (this.stopped) return;
    this.handlers = handlers;
    const nodeSelector = `metadata.name=${this.options.nodeName}`;
    this.add('Service', '/api/v1/services', SERVICE_SELECTOR);
    this.add('EndpointSlice', '/apis/discovery.k8s.io/v1/endpointslices', SERVICE_SELECTOR);
    this.add('Node', '/api/v1/nodes', undefined, nodeSelector);
    await this.firstList();
    if (this.stopped) return;
    handlers.synced();
    // As the shared informers kube-proxy builds with ConfigSyncPeriod: every period, each object again.
    const period = this.options.resyncPeriodMs;
    if (period !== undefined && period > 0 && !this.stopped) {
      this.resyncTimer = setInterval(() => this.handlers?.resync?.(), period);
      this.resyncTimer.unref?.();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resyncTimer);
    for (const w of this.watched) {
      clearTimeout(w.restartTimer);
      w.informer.stop();
    }
  }

  private add(kind: Kind, path: string, labelSelector?: string, fieldSelector?: string): void {
    const w: Watched = { kind, informer: undefined as never, listed: false, delayMs: this.backoff.initialMs, startedAt: 0 };
    const kc = this.options.kubeconfig;
    const emit = (type: SourceEvent['type']) => (object: KubernetesObject) => this.gate.offer(kind, type, object);
    w.informer = new Informer({
      path,
      labelSelector,
      fieldSelector,
      // Wrapping the list tells us when the initial state (or a relist) has arrived.
      list: async (p, query) => {
        const result = await listObjects(kc, p, query);
        if (!w.listed) this.options.logger.info({ controller: CONTROLLER[kind] }, 'Caches are synced');
        w.listed = true;
        return result;
      },
      watch: apiWatcher(kc),
      handlers: {
        add: emit('add'),
        update: emit('update'),
        delete: emit('delete'),
        // Unchanged, so past the gate: it was judged when it first came.
        replayed: (object) => this.handlers?.replayed?.({ kind, type: 'update', object } as SourceEvent),
        error: (err) => this.failed(w, err),
        expired: () => this.expired(w),
      },
    });
    this.watched.push(w);
  }

  /** Starts every informer and waits for their first lists; an unreachable server fails start-up with an explanation. */
  private async firstList(): Promise<void> {
    // Long enough for a few retries (1 s, 2 s, 4 s backoff), short enough to fail start-up visibly.
    const timeoutMs = this.options.initialListTimeoutMs ?? 10_000;
    const server = this.options.kubeconfig.getCurrentCluster()?.server;
    const deadline = Date.now() + timeoutMs;
    for (const w of this.watched) {
      if (this.stopped) return;
      w.startedAt = Date.now();
      this.options.logger.info(`Starting ${CONTROLLER[w.kind]} controller`);
      this.options.logger.info({ controller: CONTROLLER[w.kind] }, 'Waiting for caches to sync');
      await w.informer.start();
    }
    // Restarts after a failed first list are scheduled by failed(); wait for all lists or the deadline.
    while (!this.watched.every((w) => w.listed)) {
      if (this.stopped) return;
      if (Date.now() > deadline) {
        const w = this.watched.find((x) => !x.listed && x.lastError !== undefined);
        const [kind, err] = w ? [w.kind, w.lastError] : ['Service', new Error('no answer')];
        throw new Error(
          `cannot reach the API server at ${server} (listing ${kind}s failed: ${describeError(err)}); check --master/--kubeconfig, the network, and that the service account may list services, endpointslices and nodes`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private failed(w: Watched, err: unknown): void {
    w.lastError = err;
    if (this.stopped) return;
    const delay = this.nextDelay(w);
    this.options.logger.warn({ kind: w.kind, err: describeError(err), retryInMs: delay }, 'watch failed; restarting the informer');
    this.restartAfter(w, delay);
  }

  /**
   * A 410 Gone: the relist waits for the backoff, as client-go's reflector
   * runs each list-and-watch after its backoff, so that a server answering
   * 410 again and again (a lagging cache behind a load balancer) is not
   * asked in a loop. Routine (history compacted while the watch was away):
   * no warning.
   */
  private expired(w: Watched): void {
    if (this.stopped) return;
    const delay = this.nextDelay(w);
    this.options.logger.debug({ kind: w.kind, relistInMs: delay }, 'watch expired (410 Gone); relisting');
    this.restartAfter(w, delay);
  }

  /** The backoff's next delay: 1 s doubling to 30 s, started over once the informer stayed up a minute (the problem is new). */
  private nextDelay(w: Watched): number {
    if (Date.now() - w.startedAt > 60_000) w.delayMs = this.backoff.initialMs;
    const delay = w.delayMs;
    w.delayMs = Math.min(w.delayMs * 2, this.backoff.maxMs);
    return delay;
  }

  private restartAfter(w: Watched, delay: number): void {
    clearTimeout(w.restartTimer);
    w.restartTimer = setTimeout(() => {
      if (this.stopped) return;
      w.startedAt = Date.now();
      w.informer.start().catch((e: unknown) => this.failed(w, e));
    }, delay);
    w.restartTimer.unref?.();
  }
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const code = (err as { code?: unknown }).code ?? cause?.code;
    const status = (err as { statusCode?: number }).statusCode;
    return [err.message, code && `(${String(code)})`, status && `HTTP ${status}`, cause?.message && cause.message !== err.message ? cause.message : undefined].filter(Boolean).join(' ');
  }
  return String(err);
}
