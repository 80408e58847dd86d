/**
 * Loads the part of @kubernetes/client-node the proxy uses, KubeConfig
 * (kubeconfig files, in-cluster and exec credentials, TLS and proxy
 * agents), without its generated API client. (The proxy's lists and
 * watches are requests of its own made with KubeConfig's credentials:
 * api-list.ts, api-watch.ts.)
 *
 * client-node's KubeConfig module imports the package's generated index,
 * which imports every API group and model: some 20 MB of JavaScript whose
 * source V8 keeps for as long as the process lives. KubeConfig itself takes
 * two small things from that index, `createConfiguration` and
 * `ServerConfiguration` (for makeApiClient, which the proxy never calls). A
 * resolve hook points that one import, from that one module, at
 * client-node-config-deps.js, which re-exports just those two. Measured on
 * Node.js 24: importing takes a quarter of the time and the process
 * keeps about 38 MiB less resident.
 *
 * The same hook gives KubeConfig's import of node:http the proxy's
 * CommonJS-loaded node:http (../node-http.ts: an ES import of node:http
 * loads undici, tls, http2 and zlib with it), and its import of node-fetch's
 * Headers a stand-in that loads node-fetch only when a Headers is made
 * (client-node-fetch-headers.ts; the proxy's requests do not use fetch).
 *
 * Each redirection is made only where it is known to fit: node's
 * synchronous module.registerHooks (Node.js 22.15+, 23.5+), and a module
 * whose imports name exactly what the stand-in exports. Otherwise (another
 * runtime, a client-node release that imports more) that module's import
 * goes where it always did, and everything works the same, heavier.
 */
import { readFileSync } from 'node:fs';
import module from 'node:module';

/** client-node's KubeConfig module, whose imports the hook redirects. */
export const CONFIG_URL = import.meta.resolve('@kubernetes/client-node/dist/config.js');
const GENERATED_INDEX_URL = new URL('./gen/index.js', CONFIG_URL).href;
const STAND_IN_URL = new URL('./client-node-config-deps.js', import.meta.url).href;
/** What KubeConfig imports from the generated index, as client-node 1.4 writes it. */
const EXPECTED_IMPORT = /^import\s*\{\s*createConfiguration\s*,\s*ServerConfiguration\s*,?\s*\}\s*from\s*'\.\/gen\/index\.js';$/m;
const ANY_IMPORT_OF_INDEX = /from\s*'\.\/gen\/index\.js'/g;
/** KubeConfig's other imports redirected, each only if the module imports it exactly so (as client-node 1.4 writes it) and once. */
const REDIRECTS = [
  { specifier: 'node:http', expected: /^import\s+http\s+from\s*'node:http';$/m, any: /from\s*'(node:)?http'/g, to: new URL('../node-http.js', import.meta.url).href },
  { specifier: 'node-fetch', expected: /^import\s*\{\s*Headers\s*,?\s*\}\s*from\s*'node-fetch';$/m, any: /from\s*'node-fetch'/g, to: new URL('./client-node-fetch-headers.js', import.meta.url).href },
];

let installed: boolean | undefined;

/** Whether the generated API is left out (the hook is in place). */
export function slimClientNode(): boolean {
  if (installed !== undefined) return installed;
  installed = false;
  const registerHooks = (module as { registerHooks?: typeof module.registerHooks }).registerHooks;
  if (typeof registerHooks !== 'function') return installed;
  const source = readFileSync(new URL(CONFIG_URL), 'utf8');
  if (!EXPECTED_IMPORT.test(source) || source.match(ANY_IMPORT_OF_INDEX)?.length !== 1) return installed;
  const redirects = new Map(REDIRECTS.filter((r) => r.expected.test(source) && source.match(r.any)?.length === 1).map((r) => [r.specifier, r.to]));
  registerHooks({
    resolve(specifier, context, nextResolve) {
      if (context.parentURL !== CONFIG_URL) return nextResolve(specifier, context);
      const to = redirects.get(specifier);
      if (to !== undefined) return { url: to, shortCircuit: true };
      const resolved = nextResolve(specifier, context);
      return resolved.url === GENERATED_INDEX_URL ? { ...resolved, url: STAND_IN_URL } : resolved;
    },
  });
  installed = true;
  return installed;
}

/**
 * The API server modules (apiserver-source.js, kubeconfig.js), loaded after
 * the hook: a module graph is resolved before any of it runs, so the hook has
 * to be in place before the import that reaches client-node starts.
 */
export async function loadApiServerModules(): Promise<[typeof import('./apiserver-source.js'), typeof import('./kubeconfig.js')]> {
  slimClientNode();
  return Promise.all([import('./apiserver-source.js'), import('./kubeconfig.js')]);
}
