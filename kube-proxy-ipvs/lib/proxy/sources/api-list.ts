/**
 * Requests to the API server (GETs of a collection: lists here, watches in
 * api-watch.ts; the POSTs of events, api-events.ts), with the credentials,
 * TLS settings and proxy agent client-node's KubeConfig gives its own
 * requests. A list's answer is the server's JSON as it is, the same shape
 * the watch stream's objects have.
 */
import type * as Http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node/dist/types.js';
import http from '../node-http.js';
import { trackApiRequest } from '../rest-client-metrics.js';

/** An HTTP answer other than 200: statusCode, and the server's Status message where it sent one. */
export class ApiRequestError extends Error {
  constructor(
    message: string,
    readonly statusCode: number,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

export async function listObjects(kc: KubeConfig, path: string, query: Record<string, string>): Promise<KubernetesListObject<KubernetesObject>> {
  const body = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    apiRequest(kc, path, query, undefined, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    }, reject).catch(reject);
  });
  if (body.status !== 200) throw statusError(body.status, body.text);
  return JSON.parse(body.text) as KubernetesListObject<KubernetesObject>;
}

/**
 * Sends a GET of `path` with `query` (or, with `send`, that request and
 * JSON body) to the current cluster, with the kubeconfig's credentials,
 * TLS settings and agent: `answer` gets the response, `failed` the
 * request's error (an abort through `signal` too). Rejects when there is
 * no cluster or its credentials cannot be applied.
 */
export async function apiRequest(
  kc: KubeConfig,
  path: string,
  query: Record<string, string>,
  signal: AbortSignal | undefined,
  answer: (res: Http.IncomingMessage) => void,
  failed: (err: Error) => void,
  send?: { method: 'POST'; json: string },
): Promise<void> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('No currently active cluster');
  const url = new URL(server + path);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const body = send === undefined ? undefined : Buffer.from(send.json);
  const headers: Http.OutgoingHttpHeaders = { Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json', 'Content-Length': body.length } : {}) };
  const options: https.RequestOptions = { method: send?.method ?? 'GET', headers, signal };
  // client-go's REST client metrics, observed here because every request passes here.
  const tracker = trackApiRequest(kc, server, query.watch === 'true', options.method, body?.length ?? 0);
  try {
    await kc.applyToHTTPSOptions(options);
  } catch (err) {
    // As client-go's transport failing to add the credentials: the attempt ends without a response.
    tracker.failed();
    throw err;
  }
  const req = (url.protocol === 'http:' ? http : https).request(url, options, (res) => {
    tracker.responded(res);
    answer(res);
  });
  req.on('error', (err) => {
    tracker.failed();
    failed(err);
  });
  req.end(body);
}

/** The error for an answer other than 200: the server's Status message where it sent one, else the status line's. */
export function statusError(status: number, text: string): ApiRequestError {
  let message = http.STATUS_CODES[status] ?? `HTTP ${status}`;
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string' && parsed.message) message = parsed.message;
  } catch {
    // Not a Status object: the status line says it.
  }
  return new ApiRequestError(message, status);
}
