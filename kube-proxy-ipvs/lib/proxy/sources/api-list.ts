/**
 * A list request to the API server (GET on a collection), with the
 * credentials, TLS settings and proxy agent client-node's KubeConfig gives
 * its own requests. The answer is the server's JSON as it is, the same
 * shape the watch stream's objects have.
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node/dist/types.js';

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
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('No currently active cluster');
  const url = new URL(server + path);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const options: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
  await kc.applyToHTTPSOptions(options);
  const body = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = (url.protocol === 'http:' ? http : https).request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  if (body.status !== 200) {
    let message = http.STATUS_CODES[body.status] ?? `HTTP ${body.status}`;
    try {
      const status = JSON.parse(body.text) as { message?: unknown };
      if (typeof status.message === 'string' && status.message) message = status.message;
    } catch {
      // Not a Status object: the status line says it.
    }
    throw new ApiRequestError(message, body.status);
  }
  return JSON.parse(body.text) as KubernetesListObject<KubernetesObject>;
}
