/**
 * /metrics/slis on the metrics server, as kube-proxy serves it
 * (component-base's SLIMetricsWithReset): the results of the health checks
 * that server's /healthz ran, in their own registry. The apiserver healthz
 * handler behind kube-proxy's /healthz records each check it runs (there,
 * only "ping") under its path's name; DELETE clears them.
 */
import { Counter, Gauge, Registry } from './prom-client-parts.js';

export type HealthcheckStatus = 'success' | 'error';

export class SliMetrics {
  readonly registry = new Registry();
  private readonly healthcheck: Gauge<'name' | 'type'>;
  private readonly healthchecksTotal: Counter<'name' | 'type' | 'status'>;

  constructor() {
    const registers = [this.registry];
    this.healthcheck = new Gauge({
      name: 'kubernetes_healthcheck',
      help: '[STABLE] This metric records the result of a single healthcheck.',
      labelNames: ['name', 'type'],
      registers,
    });
    this.healthchecksTotal = new Counter({
      name: 'kubernetes_healthchecks_total',
      help: '[STABLE] This metric records the results of all healthcheck.',
      labelNames: ['name', 'type', 'status'],
      registers,
    });
  }

  /** One run of check `name` by the handler at /`type` (healthz). */
  observe(name: string, type: string, status: HealthcheckStatus): void {
    this.healthcheck.set({ name, type }, status === 'success' ? 1 : 0);
    this.healthchecksTotal.inc({ name, status, type });
  }

  reset(): void {
    this.registry.resetMetrics();
  }

  /**
   * The text exposition, leaving out a metric with no series yet as Go's
   * client does (prom-client writes its HELP and TYPE lines regardless):
   * before any check ran, the body is empty.
   */
  async text(): Promise<string> {
    let out = '';
    for (const m of await this.registry.getMetricsAsJSON()) {
      if (m.values.length > 0) out += `${await this.registry.getSingleMetricAsString(m.name)}\n`;
    }
    return out;
  }
}
