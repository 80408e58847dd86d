/**
 * Services + EndpointSlices → desired state, one case per kube-proxy
 * behaviour: which endpoints a port gets (readiness, terminating
 * endpoints, topology hints), Services without a ClusterIP or selector,
 * session affinity, the scheduler, IPv6 and dual-stack. Each case asserts
 * the whole state, as in controller-mapping.test.ts.
 */
import t from 'tap';
import { defaultProxyConfig } from '../../lib/kubernetes/model.js';
import { desiredState } from '../../lib/desired/known-objects.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import { clusterIPWeb, clusterIPWith, hinted, http, nodeA, remoteOnly, runCases, vs, type Case } from '../support/mapping-fixtures.js';

const cases: Case[] = [
  {
    name: 'ready endpoints first: a serving+terminating one is left out while a ready one exists',
    services: [clusterIPWeb],
    slices: [slice('web', [endpoint('10.244.2.6', { ready: true }), endpoint('10.244.3.7', { ready: false, serving: true, terminating: true })], http)],
    want: clusterIPWith([['10.244.2.6', 8080]]),
  },
  {
    name: 'serving+terminating endpoints are used when no ready one is left; not-serving ones never',
    services: [clusterIPWeb],
    slices: [
      slice('web', [
        endpoint('10.244.2.6', { ready: false, serving: false, terminating: true }),
        endpoint('10.244.3.7', { ready: false, serving: true, terminating: true }),
        endpoint('10.244.4.8', { ready: false }),
      ], http),
    ],
    want: clusterIPWith([['10.244.3.7', 8080]]),
  },
  ...(['web-a', 'web-z'] as const).map((terminatingSlice) => ({
    name: `an address in two slices (a pod IP reused before the old pod is gone): the copy that is not terminating wins, in ${terminatingSlice === 'web-a' ? 'the later' : 'the earlier'} slice too`,
    services: [clusterIPWeb],
    slices: [
      slice('web', [endpoint('10.244.3.7', { ready: false, serving: true, terminating: true })], http, { name: terminatingSlice }),
      slice('web', [endpoint('10.244.3.7', { ready: false })], http, { name: 'web-m' }),
    ],
    // The new pod's copy is not ready yet, and a not-terminating endpoint is no fallback: nothing to send to.
    want: clusterIPWith([]),
  })),
  {
    name: 'a terminating endpoint that leaves serving unset counts as serving (kube-proxy reads a nil serving as true)',
    services: [clusterIPWeb],
    slices: [slice('web', [endpoint('10.244.3.7', { ready: false, terminating: true }), endpoint('10.244.4.8', { ready: false })], http)],
    want: clusterIPWith([['10.244.3.7', 8080]]),
  },
  {
    name: 'topology hints: when every endpoint has one and some match the node zone, only those',
    services: [clusterIPWeb],
    slices: [slice('web', [endpoint('10.244.2.6', { zones: ['zone-a'] }), endpoint('10.244.3.7', { zones: ['zone-b'] })], http)],
    want: clusterIPWith([['10.244.2.6', 8080]]),
  },
  {
    name: 'topology hints are ignored when one endpoint lacks a hint',
    services: [clusterIPWeb],
    slices: [slice('web', [endpoint('10.244.2.6', { zones: ['zone-a'] }), endpoint('10.244.3.7')], http)],
    want: clusterIPWith([['10.244.2.6', 8080], ['10.244.3.7', 8080]]),
  },
  {
    name: 'forNodes hints (PreferSameNode): when every endpoint has one and some are for this node, only those, before zone hints',
    services: [clusterIPWeb],
    slices: [slice('web', [hinted('10.244.2.6', ['zone-a'], ['node-a']), hinted('10.244.3.7', ['zone-a'], ['node-b']), hinted('10.244.4.8', ['zone-a'], ['node-a'])], http)],
    want: clusterIPWith([['10.244.2.6', 8080], ['10.244.4.8', 8080]]),
  },
  {
    name: 'forNodes hints with none for this node: the zone hints decide',
    services: [clusterIPWeb],
    slices: [slice('web', [hinted('10.244.2.6', ['zone-a'], ['node-b']), hinted('10.244.3.7', ['zone-b'], ['node-c'])], http)],
    want: clusterIPWith([['10.244.2.6', 8080]]),
  },
  {
    name: 'forNodes hints missing on one endpoint: node hints ignored, zone hints still apply',
    services: [clusterIPWeb],
    slices: [slice('web', [hinted('10.244.2.6', ['zone-a'], ['node-b']), hinted('10.244.3.7', ['zone-b'], []), hinted('10.244.4.8', ['zone-a'], ['node-a'])], http)],
    want: clusterIPWith([['10.244.2.6', 8080], ['10.244.4.8', 8080]]),
  },
  {
    name: 'forNodes hints: not-ready endpoints do not count, and with no ready one left serving+terminating ones ignore hints',
    services: [clusterIPWeb],
    slices: [
      slice('web', [
        { ...hinted('10.244.2.6', [], ['node-b']), conditions: { ready: false, serving: true, terminating: true } },
        { ...hinted('10.244.3.7', [], ['node-c']), conditions: { ready: false, serving: true, terminating: true } },
      ], http),
    ],
    want: clusterIPWith([['10.244.2.6', 8080], ['10.244.3.7', 8080]]),
  },
  {
    name: 'topology hints are ignored when none is for this zone',
    services: [clusterIPWeb],
    slices: [slice('web', [endpoint('10.244.2.6', { zones: ['zone-b'] }), endpoint('10.244.3.7', { zones: ['zone-c'] })], http)],
    want: clusterIPWith([['10.244.2.6', 8080], ['10.244.3.7', 8080]]),
  },
  {
    name: 'headless (clusterIP None) and ExternalName services are ignored',
    services: [
      service('db', { clusterIP: 'None', ports: [{ name: 'pg', port: 5432 }] }),
      service('ext', { type: 'ExternalName', ports: [{ name: 'http', port: 80 }] }),
    ],
    slices: [slice('db', [endpoint('10.244.2.6')], [{ name: 'pg', protocol: 'TCP', port: 5432 }])],
    want: { virtualServers: [], ipsets: {}, boundAddresses: [], setCount: 17 },
  },
  {
    name: 'a service without selector works from manually written slices',
    services: [service('legacy-db', { clusterIP: '10.96.0.80', ports: [{ name: 'pg', port: 5432 }] })],
    slices: [slice('legacy-db', [endpoint('192.168.50.5')], [{ name: 'pg', protocol: 'TCP', port: 5432 }], { name: 'legacy-db-manual' })],
    want: {
      virtualServers: [vs('TCP', '10.96.0.80', 5432, [['192.168.50.5', 5432]])],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.80,tcp:5432'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.80'] },
      },
      boundAddresses: ['10.96.0.80'],
      setCount: 17,
    },
  },
  {
    name: 'session affinity ClientIP: persistent, default timeout 10800',
    services: [service('web', { clusterIP: '10.96.0.10', sessionAffinity: 'ClientIP', ports: [{ name: 'http', port: 80 }] })],
    slices: [remoteOnly],
    want: clusterIPWith([['10.244.2.6', 8080]], { timeout: 10800 }),
  },
  {
    name: 'session affinity ClientIP with timeoutSeconds',
    services: [
      service('web', {
        clusterIP: '10.96.0.10',
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
        ports: [{ name: 'http', port: 80 }],
      }),
    ],
    slices: [remoteOnly],
    want: clusterIPWith([['10.244.2.6', 8080]], { timeout: 600 }),
  },
  {
    name: 'the configured scheduler is used',
    config: { scheduler: 'lc' },
    services: [clusterIPWeb],
    slices: [remoteOnly],
    want: clusterIPWith([['10.244.2.6', 8080]], { scheduler: 'lc' }),
  },
  {
    name: 'IPv6: KUBE-6- sets (names cut to 31 characters), IPv6 endpoints',
    node: { name: 'node-a', addresses: ['fd00:1::10'] },
    services: [service('web', { type: 'NodePort', clusterIP: 'fd00:96::10', ipFamilies: ['IPv6'], ports: [{ name: 'http', port: 80, nodePort: 30080 }] })],
    slices: [slice('web', [endpoint('fd00:244::5', { node: 'node-b' })], http, { addressType: 'IPv6' })],
    want: {
      virtualServers: [vs('TCP', 'fd00:1::10', 30080, [['fd00:244::5', 8080]]), vs('TCP', 'fd00:96::10', 80, [['fd00:244::5', 8080]])],
      ipsets: {
        'KUBE-6-CLUSTER-IP': { type: 'hash:ip,port', entries: ['fd00:96::10,tcp:80'] },
        'KUBE-6-IPVS-IPS': { type: 'hash:ip', entries: ['fd00:96::10'] },
        'KUBE-6-NODE-PORT-TCP': { type: 'bitmap:port', entries: ['30080'] },
      },
      boundAddresses: ['fd00:96::10'],
      setCount: 17,
    },
  },
  {
    name: 'dual-stack: a virtual server per family from clusterIPs, endpoints from the slice of each family',
    node: { name: 'node-a', addresses: ['192.168.1.10', 'fd00:1::10'] },
    services: [
      service('web', { clusterIP: '10.96.0.70', clusterIPs: ['10.96.0.70', 'fd00:96::70'], ipFamilies: ['IPv4', 'IPv6'], ports: [{ name: 'http', port: 80 }] }),
    ],
    slices: [
      slice('web', [endpoint('10.244.2.6')], http, { name: 'web-v4' }),
      slice('web', [endpoint('fd00:244::6')], http, { name: 'web-v6', addressType: 'IPv6' }),
    ],
    want: {
      virtualServers: [vs('TCP', '10.96.0.70', 80, [['10.244.2.6', 8080]]), vs('TCP', 'fd00:96::70', 80, [['fd00:244::6', 8080]])],
      ipsets: {
        'KUBE-6-CLUSTER-IP': { type: 'hash:ip,port', entries: ['fd00:96::70,tcp:80'] },
        'KUBE-6-IPVS-IPS': { type: 'hash:ip', entries: ['fd00:96::70'] },
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.70,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.70'] },
      },
      boundAddresses: ['10.96.0.70', 'fd00:96::70'],
      setCount: 34,
    },
  },
  {
    name: 'an IPv6-only service on an IPv4-only node is not served',
    services: [service('web', { clusterIP: 'fd00:96::10', ipFamilies: ['IPv6'], ports: [{ name: 'http', port: 80 }] })],
    slices: [slice('web', [endpoint('fd00:244::5')], http, { addressType: 'IPv6' })],
    want: { virtualServers: [], ipsets: {}, boundAddresses: [], setCount: 17 },
  },
];

runCases(cases);

t.test('scheduler mh also sets the source-hash flag (IP_VS_SVC_F_SCHED2), as kube-proxy does', async (t) => {
  const desired = desiredState({ services: [clusterIPWeb], endpointSlices: [remoteOnly] }, nodeA, defaultProxyConfig({ scheduler: 'mh' }));
  t.same([...desired.virtualServers.values()].map((v) => v.service), [
    { protocol: 'tcp', address: '10.96.0.10', port: 80, scheduler: 'mh', flags: { sched2: true } },
  ]);
});

t.test('IPv6 set names are cut to 31 characters', async (t) => {
  const desired = desiredState({ services: [], endpointSlices: [] }, { name: 'n', addresses: ['fd00::1'] }, defaultProxyConfig());
  const names = [...desired.ipsets.keys()];
  t.ok(names.includes('KUBE-6-LOAD-BALANCER-SOURCE-CID'));
  t.ok(names.includes('KUBE-6-NODE-PORT-LOCAL-SCTP-HAS'));
  t.ok(names.every((n) => n.length <= 31 && n.startsWith('KUBE-6-')));
});
