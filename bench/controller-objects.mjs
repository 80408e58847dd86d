/**
 * The cluster the controller benchmarks program: N ClusterIP Services
 * (TCP port 80 → 8080), each with one EndpointSlice of 10 ready endpoints
 * on other nodes (so no KUBE-LOOP-BACK entries: a node hosts few of a big
 * cluster's pods), and the Node the proxy runs as. As objects (for the
 * test API server) and as YAML files (for --manifests).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const ENDPOINTS_PER_SERVICE = 10;
export const NODE_NAME = 'bench-node';
export const NODE_IP = '192.168.99.10';
export const NAMESPACE = 'bench';
/** Services per manifest file: a folder of a few big files, as one would keep them. */
export const SERVICES_PER_FILE = 100;

const dotted = (n) => `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/** Service i's ClusterIP: 10.96.0.0/12 + 1 + i. */
export const clusterIP = (i) => dotted(((10 << 24) | (96 << 16)) + 1 + i);

/** Endpoint k of service i: 172.16.0.0/12 + i*16 + k (k < 16 leaves room for the extra endpoint of benchmark 5). */
export const endpointIP = (i, k) => dotted(((172 << 24) | (16 << 16)) + i * 16 + k);

export function service(i) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${i}`, namespace: NAMESPACE },
    spec: {
      type: 'ClusterIP',
      clusterIP: clusterIP(i),
      clusterIPs: [clusterIP(i)],
      ipFamilies: ['IPv4'],
      ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }],
    },
  };
}

/** Service i's slice with endpoints 0..count-1. */
export function slice(i, count = ENDPOINTS_PER_SERVICE) {
  const endpoints = [];
  for (let k = 0; k < count; k++) endpoints.push({ addresses: [endpointIP(i, k)], conditions: { ready: true }, nodeName: `node-${(i + k) % 500}` });
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `svc-${i}-abcde`, namespace: NAMESPACE, labels: { 'kubernetes.io/service-name': `svc-${i}` } },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    endpoints,
  };
}

export function node() {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE_NAME }, status: { addresses: [{ type: 'InternalIP', address: NODE_IP }] } };
}

// YAML by hand (flow style for the small maps): the yaml package's stringify
// of 20,000 objects takes longer than the benchmark it prepares.
function serviceYaml(i) {
  const ip = clusterIP(i);
  return `apiVersion: v1
kind: Service
metadata: {name: svc-${i}, namespace: ${NAMESPACE}}
spec:
  type: ClusterIP
  clusterIP: ${ip}
  clusterIPs: [${ip}]
  ipFamilies: [IPv4]
  ports:
  - {name: http, protocol: TCP, port: 80, targetPort: 8080}
`;
}

function sliceYaml(i, count = ENDPOINTS_PER_SERVICE) {
  const s = slice(i, count);
  return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: ${s.metadata.name}
  namespace: ${NAMESPACE}
  labels: {kubernetes.io/service-name: svc-${i}}
addressType: IPv4
ports:
- {name: http, protocol: TCP, port: 8080}
endpoints:
${s.endpoints.map((e) => `- addresses: [${e.addresses[0]}]\n  conditions: {ready: true}\n  nodeName: ${e.nodeName}\n`).join('')}`;
}

const fileOf = (i, ext = 'yaml') => `services-${String(Math.floor(i / SERVICES_PER_FILE)).padStart(4, '0')}.${ext}`;

/** The services of each file, SERVICES_PER_FILE at a time: [from, to) per file. */
function* fileRanges(services) {
  for (let from = 0; from < services; from += SERVICES_PER_FILE) yield [from, Math.min(services, from + SERVICES_PER_FILE)];
}

/** The YAML of one manifest file: services [from, to), service `extra` with one endpoint more. */
function fileText(from, to, extra) {
  const docs = [];
  for (let i = from; i < to; i++) docs.push(serviceYaml(i), sliceYaml(i, i === extra ? ENDPOINTS_PER_SERVICE + 1 : ENDPOINTS_PER_SERVICE));
  return docs.join('---\n');
}

/** Writes node.yaml and services-NNNN.yaml (SERVICES_PER_FILE services each) into dir. */
export function writeManifests(dir, services) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'node.yaml'), `apiVersion: v1
kind: Node
metadata: {name: ${NODE_NAME}}
status:
  addresses: [{type: InternalIP, address: ${NODE_IP}}]
`);
  for (const [from, to] of fileRanges(services)) writeFileSync(path.join(dir, fileOf(from)), fileText(from, to));
}

/**
 * The same objects as JSON, in as many files (an array each): what the
 * least a Node program must do to take the cluster in (bench/parse-floor.mjs)
 * reads.
 */
export function writeJsonObjects(dir, services) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'node.json'), JSON.stringify([node()]));
  for (const [from, to] of fileRanges(services)) {
    const docs = [];
    for (let i = from; i < to; i++) docs.push(service(i), slice(i));
    writeFileSync(path.join(dir, fileOf(from, 'json')), JSON.stringify(docs));
  }
}

/**
 * Rewrites the file holding service i so that its slice has one endpoint
 * more (`extra` true) or the usual ten; written to a temporary name and
 * renamed, as an editor or a config-management tool would.
 */
export function rewriteManifest(dir, services, i, extra, rename) {
  const from = Math.floor(i / SERVICES_PER_FILE) * SERVICES_PER_FILE;
  const file = path.join(dir, fileOf(i));
  const tmp = path.join(dir, `.${fileOf(i)}.tmp`);
  writeFileSync(tmp, fileText(from, Math.min(services, from + SERVICES_PER_FILE), extra ? i : -1));
  rename(tmp, file);
}
