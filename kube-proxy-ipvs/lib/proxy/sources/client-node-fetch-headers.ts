/**
 * What client-node's KubeConfig module imports from node-fetch, `Headers`,
 * loading node-fetch only when one is made: client-node-loader.ts points
 * that import here. KubeConfig makes Headers only in applyToFetchOptions,
 * for client-node's own fetch-based requests (its generated API client,
 * Watch, logs), none of which the proxy makes; node-fetch's URL parser
 * alone keeps large Unicode tables on the heap.
 */
import { createRequire } from 'node:module';
import { CONFIG_URL } from './client-node-loader.js';

/** node-fetch as client-node resolves it (it may be client-node's own copy). */
const requireFromClientNode = createRequire(CONFIG_URL);

type HeadersClass = new (init?: unknown) => object;

export class Headers {
  constructor(init?: unknown) {
    const Real = (requireFromClientNode('node-fetch') as { Headers: HeadersClass }).Headers;
    // A constructor may return another object: callers get node-fetch's own Headers.
    return new Real(init) as Headers;
  }
}
