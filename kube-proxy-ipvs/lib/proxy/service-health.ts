/**
 * Per-service health-check node ports (kube-proxy's ServiceHealthServer):
 * for each externalTrafficPolicy: Local Service with a healthCheckNodePort,
 * an HTTP server on that port answering any path with the number of local
 * endpoints, 200 when there is at least one (and the proxy is healthy),
 * 503 otherwise, so a cloud load balancer only sends traffic to nodes that
 * can serve it without a second hop.
 *
 * Like kube-proxy, each port is served on the node's NodePort addresses:
 * every address when --nodeport-addresses is not set, otherwise the node
 * addresses it selects; with --netns, in that namespace (the node's
 * addresses live there). A port that cannot be bound (in use) is logged
 * and tried again on the next update, as kube-proxy does; it does not stop
 * the proxy. When the addresses change, the ports are bound again.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { closeServer, listenOn } from './http-util.js';
import type { HealthCheckService } from '../desired/local-endpoints.js';
import { nodeContext } from '../desired/node-addresses.js';
import type { NodeInfo } from '../kubernetes/model.js';
import { familyOf } from 'ipvs-netlink/address';
import { type ProxyOptions, proxyConfigOf } from './options.js';

async function closeAll(servers: Server[]): Promise<void> {
  await Promise.all(servers.map((s) => closeServer(s)));
}

/**
 * Where health-check node ports listen, as kube-proxy decides it: on every
 * address when --nodeport-addresses is unset or has the keyword "all"
 * ("::" when the node has IPv6, which a dual-stack socket also serves over
 * IPv4), else on the node addresses it selects, the same ones NodePorts
 * are served on.
 */
export function healthCheckHosts(o: ProxyOptions, node: NodeInfo | undefined): string[] {
  const v6 = node?.families ? node.families.includes('inet6') : (node?.addresses ?? []).some((a) => familyOf(a) === 'inet6');
  if (o.nodePortAddresses.length === 0 || o.nodePortAddresses.includes('all') || !node) return [v6 ? '::' : '0.0.0.0'];
  return [...nodeContext(node, proxyConfigOf(o)).nodePortIPs.values()].flat();
}

interface Listener {
  /** One per address; empty until every address is bound. */
  servers: Server[];
  /** The addresses they were bound on. */
  hosts: string;
  service: HealthCheckService;
}

export class ServiceHealthServers {
  private readonly listeners = new Map<number, Listener>();
  private closed = false;
  /** Updates run one at a time (binding in another namespace takes a while; two must not race for a port). */
  private updating: Promise<void> = Promise.resolve();

  constructor(
    private readonly opts: {
      /** The addresses to serve on, worked out per update (the node's addresses can change). */
      hosts: () => string[];
      /** --netns: listen in that namespace. */
      netns?: string;
      logger: Logger;
      proxyHealthy: () => boolean;
    },
  ) {}

  /** Makes the set of listeners match `services` (by port) and updates their counts. */
  update(services: HealthCheckService[]): Promise<void> {
    const run = this.updating.then(() => this.apply(services));
    this.updating = run.catch(() => undefined); // the caller logs a failure; the next update still runs
    return run;
  }

  private async apply(services: HealthCheckService[]): Promise<void> {
    if (this.closed) return;
    const hosts = this.opts.hosts();
    const hostsKey = hosts.join(',');
    const wanted = new Map(services.map((s) => [s.port, s]));
    for (const [port, l] of this.listeners) {
      if (!wanted.has(port) || l.hosts !== hostsKey) {
        this.listeners.delete(port);
        await closeAll(l.servers);
      }
    }
    for (const [port, service] of wanted) {
      const l = this.listeners.get(port);
      if (l) {
        l.service = service;
        if (l.servers.length > 0) continue;
      }
      const entry: Listener = l ?? { service, servers: [], hosts: hostsKey };
      this.listeners.set(port, entry);
      const servers: Server[] = [];
      try {
        for (const host of hosts) {
          servers.push(await listenOn((req, res) => this.answer(entry.service, req, res), host, port, `health check node port for ${service.namespace}/${service.name}`, this.opts.netns));
        }
        entry.servers = servers;
      } catch (err) {
        await closeAll(servers);
        this.opts.logger.error({ err: (err as Error).message, port, hosts }, 'health check node port not served; will retry');
      }
    }
  }

  ports(): number[] {
    return [...this.listeners].filter(([, l]) => l.servers.length > 0).map(([p]) => p);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.updating;
    await Promise.all([...this.listeners.values()].map((l) => closeAll(l.servers)));
    this.listeners.clear();
  }

  /**
   * kube-proxy answers with one family proxier's count, of its own
   * family's endpoints: here that of the family the request arrived over
   * (an IPv4 client of a dual-stack socket shows as an IPv4-mapped
   * address) when the Service has that family, else the Service's own, so
   * a single-family Service probed over the other family is not 503.
   */
  private answer(s: HealthCheckService, req: IncomingMessage, res: ServerResponse): void {
    const local = req.socket.localAddress ?? '';
    const over = local.includes(':') && !/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(local) ? 'inet6' : 'inet';
    const family = s.families.includes(over) || s.families.length === 0 ? over : s.families[0]!;
    const localEndpoints = s.localEndpoints[family];
    const healthy = this.opts.proxyHealthy();
    const code = localEndpoints > 0 && healthy ? 200 : 503;
    // The body and headers kube-proxy sends (pkg/proxy/healthcheck/service_health.go).
    const body = `{
	"service": {
		"namespace": ${JSON.stringify(s.namespace)},
		"name": ${JSON.stringify(s.name)}
	},
	"localEndpoints": ${localEndpoints},
	"serviceProxyHealthy": ${healthy}
}`;
    res
      .writeHead(code, {
        'Content-Type': 'application/json',
        'X-Content-Type-Options': 'nosniff',
        'X-Load-Balancing-Endpoint-Weight': String(localEndpoints),
      })
      .end(body);
  }
}
