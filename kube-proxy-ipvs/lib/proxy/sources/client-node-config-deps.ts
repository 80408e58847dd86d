/**
 * What client-node's KubeConfig module imports from the package's generated
 * index, and nothing else: client-node-loader.ts points that import here.
 * KubeConfig uses both only in makeApiClient, which the proxy never calls,
 * and their modules load the generated client's fetch library (node-fetch,
 * with a URL parser whose Unicode tables stay on the heap), so each
 * is loaded when first used: a synchronous require of an ES module, which
 * every runtime that installs the hook (Node.js 22.15+) has.
 */
import { createRequire } from 'node:module';
import type { createConfiguration as CreateConfiguration } from '@kubernetes/client-node/dist/gen/configuration.js';
import type { ServerConfiguration as GeneratedServerConfiguration } from '@kubernetes/client-node/dist/gen/servers.js';

const require = createRequire(import.meta.url);

export const createConfiguration: typeof CreateConfiguration = (conf) =>
  (require('@kubernetes/client-node/dist/gen/configuration.js') as { createConfiguration: typeof CreateConfiguration }).createConfiguration(conf);

export class ServerConfiguration {
  constructor(url: string, variables: Record<string, string>) {
    const Real = (require('@kubernetes/client-node/dist/gen/servers.js') as { ServerConfiguration: typeof GeneratedServerConfiguration }).ServerConfiguration;
    // A constructor may return another object: KubeConfig gets the generated class's own.
    return new Real(url, variables);
  }
}
