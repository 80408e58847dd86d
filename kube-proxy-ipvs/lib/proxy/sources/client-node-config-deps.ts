/**
 * What client-node's KubeConfig module imports from the package's generated
 * index, and nothing else: client-node-loader.ts points that import here.
 */
export { createConfiguration } from '@kubernetes/client-node/dist/gen/configuration.js';
export { ServerConfiguration } from '@kubernetes/client-node/dist/gen/servers.js';
