/**
 * node:http, loaded the way CommonJS loads it. An ES `import` of node:http
 * makes Node build the module's ES facade, which reads every export, and
 * three of them (WebSocket, CloseEvent, MessageEvent) are getters that load
 * undici, and with it web streams, tls, http2 and zlib: some 70 of Node's
 * own modules the proxy never runs, resident for the life of the process
 * and loaded at every start (nodejs/node#59686; BENCHMARKS.md has the
 * figures). require() leaves the getters alone.
 *
 * The proxy's servers and API requests take node:http from here, and so
 * does @kubernetes/client-node's KubeConfig in the binary
 * (client-node-loader.ts points its import of node:http here).
 */
import type * as Http from 'node:http';
import { createRequire } from 'node:module';

const http = createRequire(import.meta.url)('node:http') as typeof Http;

export default http;
export const { createServer } = http;
