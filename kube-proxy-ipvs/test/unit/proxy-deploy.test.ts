/**
 * deploy/: what can be checked without a cluster or a Docker engine.
 *  - every object in kube-proxy-ipvs.yaml is a valid Kubernetes object:
 *    each field is one the API's own types have (the generated models of
 *    @kubernetes/client-node, walked recursively), with the right JSON type;
 *  - the objects fit together (selector and labels, service account and
 *    RBAC, volumes and mounts, ConfigMap keys, probe port and healthz);
 *  - the embedded KubeProxyConfiguration is read by our config parser, the
 *    embedded kubeconfig by our kubeconfig loader (client-go's tokenFile
 *    becoming a bearer token read from the file), and the container's
 *    command line by our flag parser, together giving the proxy an API
 *    server address that is not the in-cluster ClusterIP;
 *  - what a fresh node needs: the node's resolver (dnsPolicy Default: the
 *    cluster DNS is not programmed before this proxy runs), metrics on
 *    loopback as upstream, RBAC no wider than the informers' list and watch;
 *  - the Dockerfile builds on a maintained Node.js line, copies files that
 *    exist, installs iptables (and no sysctl: procps), labels the image with what
 *    `--version` prints, and puts the binary at kube-proxy's own path, which
 *    the DaemonSet runs (as kubeadm's does).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { parseConfig } from '../../lib/proxy/config-file.js';
import { resolveOptions } from '../../lib/proxy/resolve-options.js';
import { loadKubeConfig } from '../../lib/proxy/sources/kubeconfig.js';
import { KUBERNETES_VERSION, packageVersion, versionOutput } from '../../lib/cli/version.js';
import { scratchDir } from '../support/scratch.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const docs: Obj[] = parseAllDocuments(readFileSync('deploy/kube-proxy-ipvs.yaml', 'utf8')).map((d) => {
  if (d.errors.length) throw new Error(`deploy/kube-proxy-ipvs.yaml: ${d.errors[0].message}`);
  return d.toJS() as Obj;
});
const byKind = (kind: string) => docs.find((d) => d.kind === kind)!;

/** Unknown fields and wrong JSON types, checked against client-node's generated API models. */
function schemaProblems(value: unknown, type: string, path: string, out: string[]): void {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) out.push(`${path} must be a list`);
    else value.forEach((v, i) => schemaProblems(v, array[1], `${path}[${i}]`, out));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (typeof value !== 'object' || Array.isArray(value)) out.push(`${path} must be a mapping`);
    else for (const [k, v] of Object.entries(value)) schemaProblems(v, map[1], `${path}.${k}`, out);
    return;
  }
  const model = (k8s as unknown as Record<string, { getAttributeTypeMap?: () => Array<{ baseName: string; type: string }> }>)[type];
  if (model?.getAttributeTypeMap) {
    if (typeof value !== 'object' || Array.isArray(value)) return void out.push(`${path} must be an object (${type})`);
    const fields = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
    for (const [k, v] of Object.entries(value)) {
      if (!fields.has(k)) out.push(`${path}.${k} is not a field of ${type}`);
      else schemaProblems(v, fields.get(k)!, `${path}.${k}`, out);
    }
    return;
  }
  const json = typeof value;
  const ok = { string: json === 'string', number: json === 'number', boolean: json === 'boolean', IntOrString: json === 'string' || json === 'number', Date: json === 'string', object: true, any: true }[type];
  if (ok === undefined) out.push(`${path}: the test does not know type ${type}`);
  else if (!ok) out.push(`${path} must be a ${type}, got ${JSON.stringify(value)}`);
}

t.test('every object is a valid Kubernetes object', async (t) => {
  t.same(docs.map((d) => `${d.apiVersion} ${d.kind}`), ['v1 ServiceAccount', 'rbac.authorization.k8s.io/v1 ClusterRole', 'rbac.authorization.k8s.io/v1 ClusterRoleBinding', 'v1 ConfigMap', 'apps/v1 DaemonSet']);
  for (const d of docs) {
    const problems: string[] = [];
    schemaProblems(d, `V1${d.kind}`, `${d.kind} ${d.metadata?.name}`, problems);
    t.same(problems, [], `${d.kind} ${d.metadata.name}: only fields the API has, with the right types`);
    t.match(d.metadata, { name: 'kube-proxy-ipvs' });
  }
  const problems: string[] = [];
  schemaProblems({ spec: { template: { spec: { containers: [{ name: 'x', imagePullPolicy: 'Always', commandd: [] }] } } } }, 'V1DaemonSet', 'typo', problems);
  t.same(problems, ['typo.spec.template.spec.containers[0].commandd is not a field of V1Container'], 'the check catches a typo');
});

t.test('the objects fit together', async (t) => {
  const ds = byKind('DaemonSet');
  const pod = ds.spec.template.spec;
  const [c] = pod.containers;
  t.same(ds.spec.selector.matchLabels, ds.spec.template.metadata.labels, 'the selector matches the pod labels');
  t.equal(pod.serviceAccountName, byKind('ServiceAccount').metadata.name);
  t.equal(pod.hostNetwork, true, 'host networking: the node\'s namespace is programmed');
  t.match(c.securityContext, { privileged: true, capabilities: { add: ['NET_ADMIN', 'NET_RAW'] } });
  const binding = byKind('ClusterRoleBinding');
  t.match(binding, { roleRef: { kind: 'ClusterRole', name: byKind('ClusterRole').metadata.name }, subjects: [{ kind: 'ServiceAccount', name: pod.serviceAccountName, namespace: byKind('ServiceAccount').metadata.namespace }] });
  const can = (resource: string, verb: string) => byKind('ClusterRole').rules.some((r: Obj) => r.resources.includes(resource) && r.verbs.includes(verb));
  for (const r of ['services', 'endpointslices', 'nodes']) t.ok(can(r, 'list') && can(r, 'watch'), `may list and watch ${r}`);
  const volumes = new Map(pod.volumes.map((v: Obj) => [v.name, v]));
  for (const m of c.volumeMounts) t.ok(volumes.has(m.name), `volume ${m.name} is defined`);
  const configMount = c.volumeMounts.find((m: Obj) => (volumes.get(m.name) as Obj).configMap);
  t.equal((volumes.get(configMount.name) as Obj).configMap.name, byKind('ConfigMap').metadata.name);
  t.ok(c.command.includes(`--config=${configMount.mountPath}/config.yaml`), '--config names the mounted config.yaml');
  t.same(Object.keys(byKind('ConfigMap').data).sort(), ['config.yaml', 'kubeconfig.conf']);
  t.equal(c.livenessProbe.httpGet.port, 10256);
  t.equal(c.readinessProbe.httpGet.port, 10256);
});

t.test('what a fresh node needs', async (t) => {
  const pod = byKind('DaemonSet').spec.template.spec;
  t.equal(pod.dnsPolicy, 'Default', 'the node\'s resolver: the cluster DNS ClusterIP is not programmed before this proxy runs');
  const config = parseConfig(byKind('ConfigMap').data['config.yaml']);
  t.equal(config.config.metricsBindAddress, '127.0.0.1:10249', 'metrics on loopback, as upstream');
  t.notOk(pod.containers[0].ports.some((p: Obj) => p.containerPort === 10249), 'and no host port for them');
  t.same(
    byKind('ClusterRole').rules.map((r: Obj) => ({ ...r, resources: [...r.resources].sort(), verbs: [...r.verbs].sort() })),
    [
      { apiGroups: [''], resources: ['nodes', 'services'], verbs: ['list', 'watch'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
    ],
    "RBAC: list and watch what the informers read, and write the node's events (as system:node-proxier), nothing else",
  );
});

t.test('the embedded configuration, kubeconfig and command line are what the proxy reads', async (t) => {
  const cm = byKind('ConfigMap').data;
  const ds = byKind('DaemonSet');
  const [c] = ds.spec.template.spec.containers;
  const mountPath = c.volumeMounts.find((m: Obj) => m.name === 'config').mountPath;

  const config = parseConfig(cm['config.yaml']);
  t.equal(config.lenientBecause, undefined, 'strict decoding: every field is a KubeProxyConfiguration field');
  t.match(config.config, { mode: 'ipvs', clientConnection: { kubeconfig: `${mountPath}/kubeconfig.conf` }, healthzBindAddress: '0.0.0.0:10256', clusterCIDR: '10.244.0.0/16', ipvs: { strictARP: true } });

  // The mounted files, with the service account's paths pointing at stand-ins.
  const dir = scratchDir('kp-deploy-');
  writeFileSync(join(dir, 'token'), 'the-service-account-token');
  writeFileSync(join(dir, 'ca.crt'), '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n');
  const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
  t.ok(cm['kubeconfig.conf'].includes(`${sa}/token`) && cm['kubeconfig.conf'].includes(`${sa}/ca.crt`), 'credentials: the pod\'s service account');
  writeFileSync(join(dir, 'kubeconfig.conf'), cm['kubeconfig.conf'].replaceAll(sa, dir));
  writeFileSync(join(dir, 'config.yaml'), cm['config.yaml'].replaceAll(mountPath, dir));

  // The container's command line, as the kubelet expands it.
  const args = c.command.slice(1).map((a: string) => a.replace('$(NODE_NAME)', 'node-1').replace(mountPath, dir));
  t.same(c.command.slice(0, 1), ['/usr/local/bin/kube-proxy'], 'kube-proxy\'s path, as in kubeadm\'s DaemonSet');
  t.same(c.env, [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }]);
  const { options } = resolveOptions(args);
  t.match(options, { hostnameOverride: 'node-1', kubeconfig: join(dir, 'kubeconfig.conf'), manifests: undefined });

  const kc = loadKubeConfig(options);
  const server = kc.getCurrentCluster()!.server;
  t.match(server, /^https:\/\/CHANGE-ME\./, 'the API server address comes from the kubeconfig (to be set by the operator)');
  t.notMatch(server, /10\.96\.0\.1|kubernetes\.default/, 'not the in-cluster Service address nobody has programmed yet');
  t.equal(kc.getCurrentCluster()!.caFile, join(dir, 'ca.crt'));
  const opts: { headers?: Record<string, string> } = {};
  await kc.applyToFetchOptions(opts as never);
  t.equal(new Headers(opts.headers as never).get('authorization'), 'Bearer the-service-account-token', 'client-go\'s tokenFile works: the token is read from the file');
});

t.test('the Dockerfile builds what the DaemonSet runs', async (t) => {
  const text = readFileSync('deploy/Dockerfile', 'utf8');
  const stages = text.split(/^FROM /m).slice(1);
  t.equal(stages.length, 2, 'a build stage and a runtime stage');
  for (const [i, stage] of stages.entries()) {
    const major = Number(/^node:(\d+)-slim\b/.exec(stage)?.[1]);
    t.ok(major >= 22 && major % 2 === 0, `stage ${i + 1} builds on a maintained Node.js LTS line (node:${major}-slim)`);
  }
  t.match(stages[0], /^node:\d+-slim AS build/);
  const runtimePackages = /apt-get install -y --no-install-recommends ([^\n\\&]+)/.exec(stages[1])![1].trim().split(/\s+/);
  t.same(runtimePackages, ['iptables', 'kmod'], 'iptables (save/restore) and kmod (modprobe ip_vs where the kernel does not load it): nothing else, no ipset, ipvsadm or sysctl (procps)');
  const [ds] = [byKind('DaemonSet').spec.template.spec];
  const modules = ds.volumes.find((v: { hostPath?: { path: string } }) => v.hostPath?.path === '/lib/modules');
  t.ok(modules && ds.containers[0].volumeMounts.some((m: { name: string; mountPath: string; readOnly?: boolean }) => m.name === modules.name && m.mountPath === '/lib/modules' && m.readOnly), "the node's /lib/modules, read-only, for that modprobe");
  const ignore = readFileSync('deploy/Dockerfile.dockerignore', 'utf8');
  for (const m of stages[0].matchAll(/^COPY (.+) \S+$/gm)) {
    for (const src of m[1].split(/\s+/)) {
      t.ok(existsSync(src), `build stage copies ${src}, which exists`);
      t.match(ignore, new RegExp(`^!${src.replace('.', '\\.')}(/\\*\\*)?$`, 'm'), `and is in the build context (${src})`);
    }
  }
  const pkg = JSON.parse(readFileSync('kube-proxy-ipvs/package.json', 'utf8')) as { bin: Record<string, string>; version: string };
  const main = `/app/kube-proxy-ipvs/${pkg.bin['kube-proxy-ipvs'].replace(/^\.\//, '')}`;
  for (const name of ['kube-proxy', 'kube-proxy-ipvs']) t.match(stages[1], new RegExp(`ln -s ${main} /usr/local/bin/${name}\\b`), `/usr/local/bin/${name} is the proxy package's bin`);
  t.match(stages[1], new RegExp(`chmod \\+x ${main}`), 'which is executable (its #! line names node)');
  const entry = JSON.parse(/^ENTRYPOINT (.+)$/m.exec(stages[1])![1]) as string[];
  const [c] = byKind('DaemonSet').spec.template.spec.containers;
  t.same(entry, ['/usr/local/bin/kube-proxy']);
  t.equal(c.command[0], entry[0], 'the DaemonSet runs the image\'s binary by kube-proxy\'s path');
  t.match(stages[1], /COPY --from=build \/src\/package\.json \/src\/binding\.gyp \.\//, 'binding.gyp marks the package root the addon loader looks for');
  const label = (name: string) => new RegExp(`${name.replaceAll('.', '\\.')}="([^"]+)"`).exec(stages[1])?.[1];
  t.equal(versionOutput(true), `Kubernetes ${KUBERNETES_VERSION}`, '--version prints what kube-proxy prints');
  t.equal(label('io.kubernetes.kube-proxy.version'), KUBERNETES_VERSION, 'the image\'s label says the same');
  t.equal(label('org.opencontainers.image.version'), pkg.version, 'and carries this package\'s version');
  t.equal(packageVersion(), pkg.version, '--version=raw reads the same package version');
  t.match(versionOutput('raw'), `ImplementationVersion:"${pkg.version}"`);
  t.equal(byKind('DaemonSet').spec.template.spec.containers[0].image.split(':').at(-1), pkg.version, 'the manifest names the image of this version');
});
