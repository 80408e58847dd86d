/**
 * Which API server to talk to, as kube-proxy decides it: --kubeconfig
 * (with --master overriding its server), --master alone, or the in-cluster
 * service account. No configuration at all is an error that says what to
 * pass, rather than a connection attempt to localhost.
 *
 * A kubeconfig written for client-go (kube-proxy's own DaemonSet mounts one
 * whose user is `tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token`)
 * works unchanged: client-node does not know that field, so such a user is
 * given client-node's tokenFile auth provider, which re-reads the file
 * (the kubelet rotates projected service-account tokens) as client-go does.
 */
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { parse, stringify } from 'yaml';

export function loadKubeConfig(opts: { kubeconfig?: string; master?: string }): KubeConfig {
  const kc = new KubeConfig();
  if (opts.kubeconfig) {
    try {
      kc.loadFromString(withTokenFileProvider(readFileSync(opts.kubeconfig, 'utf8')));
      // As loadFromFile does: relative certificate and key paths are relative to the file.
      kc.makePathsAbsolute(dirname(opts.kubeconfig));
    } catch (e) {
      throw new Error(`--kubeconfig ${opts.kubeconfig}: cannot load it: ${(e as Error).message}`);
    }
    if (opts.master) {
      const current = kc.getCurrentCluster();
      kc.loadFromOptions({
        clusters: kc.clusters.map((c) => (c.name === current?.name ? { ...c, server: opts.master } : c)),
        users: kc.users,
        contexts: kc.contexts,
        currentContext: kc.currentContext,
      });
    }
    if (!kc.getCurrentCluster()) throw new Error(`--kubeconfig ${opts.kubeconfig}: it has no current context/cluster; set current-context`);
    return kc;
  }
  if (opts.master) {
    // client-node refuses plain http unless TLS verification is "skipped"; there is no TLS to verify on http://.
    const plainHttp = opts.master.startsWith('http://');
    kc.loadFromClusterAndUser({ name: 'master', server: opts.master, skipTLSVerify: plainHttp }, { name: 'kube-proxy' });
    return kc;
  }
  if (!process.env.KUBERNETES_SERVICE_HOST) {
    throw new Error('no API server configured: pass --kubeconfig FILE or --master URL, run in a pod (in-cluster service account), or use --manifests PATH to run without a cluster');
  }
  try {
    kc.loadFromCluster();
  } catch (e) {
    throw new Error(`in-cluster configuration failed (service account token/CA not mounted?): ${(e as Error).message}`);
  }
  return kc;
}

/** client-go's `user.tokenFile` → client-node's `auth-provider: {name: tokenFile, config: {tokenFile}}`. */
function withTokenFileProvider(text: string): string {
  const doc = parse(text) as { users?: Array<{ user?: Record<string, unknown> }> } | null;
  let changed = false;
  for (const u of doc?.users ?? []) {
    const file = u.user?.tokenFile;
    if (typeof file === 'string' && u.user && !u.user.token && !u.user['auth-provider']) {
      u.user['auth-provider'] = { name: 'tokenFile', config: { tokenFile: file } };
      changed = true;
    }
  }
  return changed ? stringify(doc) : text;
}
