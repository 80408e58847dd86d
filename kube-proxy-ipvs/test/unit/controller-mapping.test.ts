/**
 * Services + EndpointSlices → desired state, one case per kube-proxy
 * behaviour. Each case asserts the whole state: virtual servers with
 * their real servers, every set that has entries (the others exist and are
 * empty: setCount), and the addresses bound to kube-ipvs0.
 */
import t from 'tap';
import { defaultProxyConfig, type Endpoint, type EndpointSlice, type NodeInfo, type ProxyConfig, type Service } from '../../lib/kubernetes/model.js';
import { desiredState } from '../../lib/desired/known-objects.js';
import type { PlannedVirtualServer } from '../../lib/plan/plan-json.js';
import { endpoint, service, slice, summary, type Summary } from '../support/k8s-objects.js';

const nodeA: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10'], labels: { 'topology.kubernetes.io/zone': 'zone-a' } };

function vs(
  protocol: PlannedVirtualServer['protocol'],
  address: string,
  port: number,
  realServers: Array<[string, number]>,
  o: { scheduler?: string; timeout?: number } = {},
): PlannedVirtualServer {
  return {
    protocol,
    address,
    port,
    scheduler: o.scheduler ?? 'rr',
    persistent: o.timeout !== undefined,
    timeout: o.timeout ?? 0,
    realServers: realServers.map(([address, port]) => ({ address, port, weight: 1 })),
  };
}

interface Case {
  name: string;
  services: Service[];
  slices?: EndpointSlice[];
  node?: NodeInfo;
  config?: Partial<ProxyConfig>;
  want: Summary;
}

const http = [{ name: 'http', protocol: 'TCP' as const, port: 8080 }];
const webSlice = slice('web', [endpoint('10.244.1.5', { node: 'node-a' }), endpoint('10.244.2.6', { node: 'node-b' })], http);
const remoteOnly = slice('web', [endpoint('10.244.2.6', { node: 'node-b' })], http);
const clusterIPWeb = service('web', { type: 'ClusterIP', clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80 }] });

const cases: Case[] = [
  {
    name: 'ClusterIP: one virtual server per port, a real server per endpoint, the address bound; a local endpoint goes to KUBE-LOOP-BACK',
    services: [clusterIPWeb],
    slices: [webSlice],
    want: {
      virtualServers: [vs('TCP', '10.96.0.10', 80, [['10.244.1.5', 8080], ['10.244.2.6', 8080]])],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.10,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.10'] },
        'KUBE-LOOP-BACK': { type: 'hash:ip,port,ip', entries: ['10.244.1.5,tcp:8080,10.244.1.5'] },
      },
      boundAddresses: ['10.96.0.10'],
      setCount: 17,
    },
  },
  {
    name: 'TCP and UDP ports of one service: endpoint ports are matched by name and protocol',
    services: [
      service('kube-dns', {
        clusterIP: '10.96.0.10',
        ports: [
          { name: 'dns', protocol: 'UDP', port: 53 },
          { name: 'dns-tcp', protocol: 'TCP', port: 53 },
          { name: 'metrics', protocol: 'TCP', port: 9153 },
        ],
      }, undefined, 'kube-system'),
    ],
    slices: [
      slice('kube-dns', [endpoint('10.244.2.3', { node: 'node-b' }), endpoint('10.244.3.4', { node: 'node-c' })], [
        { name: 'dns', protocol: 'UDP', port: 53 },
        { name: 'dns-tcp', protocol: 'TCP', port: 53 },
        { name: 'metrics', protocol: 'TCP', port: 9153 },
      ], { namespace: 'kube-system' }),
    ],
    want: {
      virtualServers: [
        vs('TCP', '10.96.0.10', 53, [['10.244.2.3', 53], ['10.244.3.4', 53]]),
        vs('TCP', '10.96.0.10', 9153, [['10.244.2.3', 9153], ['10.244.3.4', 9153]]),
        vs('UDP', '10.96.0.10', 53, [['10.244.2.3', 53], ['10.244.3.4', 53]]),
      ],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.10,tcp:53', '10.96.0.10,tcp:9153', '10.96.0.10,udp:53'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.10'] },
      },
      boundAddresses: ['10.96.0.10'],
      setCount: 17,
    },
  },
  {
    name: 'an endpoint port with another name gives the port no real server',
    services: [clusterIPWeb],
    slices: [slice('web', [endpoint('10.244.2.6')], [{ name: 'metrics', protocol: 'TCP', port: 9090 }])],
    want: {
      virtualServers: [vs('TCP', '10.96.0.10', 80, [])],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.10,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.10'] },
      },
      boundAddresses: ['10.96.0.10'],
      setCount: 17,
    },
  },
  {
    name: 'NodePort: a virtual server per node address (not bound), the port in KUBE-NODE-PORT-TCP',
    node: { name: 'node-a', addresses: ['192.168.1.10', '10.0.0.10'] },
    services: [service('web', { type: 'NodePort', clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80, nodePort: 30080 }] })],
    slices: [remoteOnly],
    want: {
      virtualServers: [
        vs('TCP', '10.0.0.10', 30080, [['10.244.2.6', 8080]]),
        vs('TCP', '10.96.0.20', 80, [['10.244.2.6', 8080]]),
        vs('TCP', '192.168.1.10', 30080, [['10.244.2.6', 8080]]),
      ],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.20,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.20'] },
        'KUBE-NODE-PORT-TCP': { type: 'bitmap:port', entries: ['30080'] },
      },
      boundAddresses: ['10.96.0.20'],
      setCount: 17,
    },
  },
  {
    name: '--nodeport-addresses narrows the node addresses NodePorts listen on',
    node: { name: 'node-a', addresses: ['192.168.1.10', '10.0.0.10'] },
    config: { nodePortAddresses: ['192.168.1.0/24'] },
    services: [service('web', { type: 'NodePort', clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80, nodePort: 30080 }] })],
    slices: [remoteOnly],
    want: {
      virtualServers: [vs('TCP', '10.96.0.20', 80, [['10.244.2.6', 8080]]), vs('TCP', '192.168.1.10', 30080, [['10.244.2.6', 8080]])],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.20,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.20'] },
        'KUBE-NODE-PORT-TCP': { type: 'bitmap:port', entries: ['30080'] },
      },
      boundAddresses: ['10.96.0.20'],
      setCount: 17,
    },
  },
  {
    name: 'SCTP NodePort: hash:ip,port entries, one per node address',
    services: [service('diameter', { type: 'NodePort', clusterIP: '10.96.0.30', ports: [{ name: 'diameter', protocol: 'SCTP', port: 3868, nodePort: 30868 }] })],
    slices: [slice('diameter', [endpoint('10.244.2.6', { node: 'node-b' })], [{ name: 'diameter', protocol: 'SCTP', port: 3868 }])],
    want: {
      virtualServers: [vs('SCTP', '10.96.0.30', 3868, [['10.244.2.6', 3868]]), vs('SCTP', '192.168.1.10', 30868, [['10.244.2.6', 3868]])],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.30,sctp:3868'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.30'] },
        'KUBE-NODE-PORT-SCTP-HASH': { type: 'hash:ip,port', entries: ['192.168.1.10,sctp:30868'] },
      },
      boundAddresses: ['10.96.0.30'],
      setCount: 17,
    },
  },
  {
    name: 'LoadBalancer with source ranges that exclude the node: firewall sets (a /32 printed bare, as ipset save does), VIP bound',
    services: [lbWithRanges(['203.0.113.0/24', '198.51.100.7/32'])],
    slices: [slice('shop', [endpoint('10.244.2.6', { node: 'node-b' })], [{ name: 'https', protocol: 'TCP', port: 8443 }])],
    want: {
      virtualServers: [
        vs('TCP', '10.96.0.40', 443, [['10.244.2.6', 8443]]),
        vs('TCP', '192.0.2.100', 443, [['10.244.2.6', 8443]]),
        vs('TCP', '192.168.1.10', 31443, [['10.244.2.6', 8443]]),
      ],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.40,tcp:443'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.40', '192.0.2.100'] },
        'KUBE-LOAD-BALANCER': { type: 'hash:ip,port', entries: ['192.0.2.100,tcp:443'] },
        'KUBE-LOAD-BALANCER-FW': { type: 'hash:ip,port', entries: ['192.0.2.100,tcp:443'] },
        'KUBE-LOAD-BALANCER-SOURCE-CIDR': {
          type: 'hash:ip,port,net',
          entries: ['192.0.2.100,tcp:443,198.51.100.7', '192.0.2.100,tcp:443,203.0.113.0/24'],
        },
        'KUBE-NODE-PORT-TCP': { type: 'bitmap:port', entries: ['31443'] },
      },
      boundAddresses: ['10.96.0.40', '192.0.2.100'],
      setCount: 17,
    },
  },
  {
    name: 'LoadBalancer with source ranges that include the node IP: the VIP may reach itself (KUBE-LOAD-BALANCER-SOURCE-IP)',
    services: [lbWithRanges(['192.168.1.0/24'])],
    slices: [slice('shop', [endpoint('10.244.2.6', { node: 'node-b' })], [{ name: 'https', protocol: 'TCP', port: 8443 }])],
    want: {
      virtualServers: [
        vs('TCP', '10.96.0.40', 443, [['10.244.2.6', 8443]]),
        vs('TCP', '192.0.2.100', 443, [['10.244.2.6', 8443]]),
        vs('TCP', '192.168.1.10', 31443, [['10.244.2.6', 8443]]),
      ],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.40,tcp:443'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.40', '192.0.2.100'] },
        'KUBE-LOAD-BALANCER': { type: 'hash:ip,port', entries: ['192.0.2.100,tcp:443'] },
        'KUBE-LOAD-BALANCER-FW': { type: 'hash:ip,port', entries: ['192.0.2.100,tcp:443'] },
        'KUBE-LOAD-BALANCER-SOURCE-CIDR': { type: 'hash:ip,port,net', entries: ['192.0.2.100,tcp:443,192.168.1.0/24'] },
        'KUBE-LOAD-BALANCER-SOURCE-IP': { type: 'hash:ip,port,ip', entries: ['192.0.2.100,tcp:443,192.0.2.100'] },
        'KUBE-NODE-PORT-TCP': { type: 'bitmap:port', entries: ['31443'] },
      },
      boundAddresses: ['10.96.0.40', '192.0.2.100'],
      setCount: 17,
    },
  },
  {
    name: 'LoadBalancer ingress with ipMode Proxy is not a local VIP',
    services: [
      service('shop', { type: 'LoadBalancer', clusterIP: '10.96.0.40', ports: [{ name: 'https', port: 443, nodePort: 31443 }] }, {
        loadBalancer: { ingress: [{ ip: '192.0.2.100', ipMode: 'Proxy' }] },
      }),
    ],
    slices: [],
    want: {
      virtualServers: [vs('TCP', '10.96.0.40', 443, []), vs('TCP', '192.168.1.10', 31443, [])],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.40,tcp:443'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.40'] },
        'KUBE-NODE-PORT-TCP': { type: 'bitmap:port', entries: ['31443'] },
      },
      boundAddresses: ['10.96.0.40'],
      setCount: 17,
    },
  },
  {
    name: 'externalIPs (ETP=Cluster): KUBE-EXTERNAL-IP; an externalIP that is a node address is not bound',
    services: [service('web', { clusterIP: '10.96.0.50', externalIPs: ['203.0.113.10', '192.168.1.10'], ports: [{ name: 'http', port: 80 }] })],
    slices: [remoteOnly],
    want: {
      virtualServers: [
        vs('TCP', '10.96.0.50', 80, [['10.244.2.6', 8080]]),
        vs('TCP', '192.168.1.10', 80, [['10.244.2.6', 8080]]),
        vs('TCP', '203.0.113.10', 80, [['10.244.2.6', 8080]]),
      ],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.50,tcp:80'] },
        'KUBE-EXTERNAL-IP': { type: 'hash:ip,port', entries: ['192.168.1.10,tcp:80', '203.0.113.10,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.50', '203.0.113.10'] },
      },
      boundAddresses: ['10.96.0.50', '203.0.113.10'],
      setCount: 17,
    },
  },
  {
    name: 'externalIPs with ETP=Local: KUBE-EXTERNAL-IP-LOCAL, local endpoints only there; the ClusterIP keeps all',
    services: [service('web', { clusterIP: '10.96.0.50', externalIPs: ['203.0.113.10'], externalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 80 }] })],
    slices: [webSlice],
    want: {
      virtualServers: [
        vs('TCP', '10.96.0.50', 80, [['10.244.1.5', 8080], ['10.244.2.6', 8080]]),
        vs('TCP', '203.0.113.10', 80, [['10.244.1.5', 8080]]),
      ],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.50,tcp:80'] },
        'KUBE-EXTERNAL-IP-LOCAL': { type: 'hash:ip,port', entries: ['203.0.113.10,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.50', '203.0.113.10'] },
        'KUBE-LOOP-BACK': { type: 'hash:ip,port,ip', entries: ['10.244.1.5,tcp:8080,10.244.1.5'] },
      },
      boundAddresses: ['10.96.0.50', '203.0.113.10'],
      setCount: 17,
    },
  },
  {
    name: 'LoadBalancer with ETP=Local: local endpoints for LB and NodePort, -LOCAL sets, healthCheckNodePort',
    services: [
      service('web', {
        type: 'LoadBalancer',
        clusterIP: '10.96.0.60',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 32000,
        ports: [{ name: 'http', port: 80, nodePort: 30060 }],
      }, { loadBalancer: { ingress: [{ ip: '192.0.2.60' }] } }),
    ],
    slices: [webSlice],
    want: {
      virtualServers: [
        vs('TCP', '10.96.0.60', 80, [['10.244.1.5', 8080], ['10.244.2.6', 8080]]),
        vs('TCP', '192.0.2.60', 80, [['10.244.1.5', 8080]]),
        vs('TCP', '192.168.1.10', 30060, [['10.244.1.5', 8080]]),
      ],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.60,tcp:80'] },
        'KUBE-HEALTH-CHECK-NODE-PORT': { type: 'bitmap:port', entries: ['32000'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.60', '192.0.2.60'] },
        'KUBE-LOAD-BALANCER': { type: 'hash:ip,port', entries: ['192.0.2.60,tcp:80'] },
        'KUBE-LOAD-BALANCER-LOCAL': { type: 'hash:ip,port', entries: ['192.0.2.60,tcp:80'] },
        'KUBE-LOOP-BACK': { type: 'hash:ip,port,ip', entries: ['10.244.1.5,tcp:8080,10.244.1.5'] },
        'KUBE-NODE-PORT-LOCAL-TCP': { type: 'bitmap:port', entries: ['30060'] },
        'KUBE-NODE-PORT-TCP': { type: 'bitmap:port', entries: ['30060'] },
      },
      boundAddresses: ['10.96.0.60', '192.0.2.60'],
      setCount: 17,
    },
  },
  {
    name: 'ETP=Local without a local endpoint falls back to cluster endpoints (#97081)',
    services: [service('web', { type: 'NodePort', clusterIP: '10.96.0.20', externalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 80, nodePort: 30080 }] })],
    slices: [remoteOnly],
    want: {
      virtualServers: [vs('TCP', '10.96.0.20', 80, [['10.244.2.6', 8080]]), vs('TCP', '192.168.1.10', 30080, [['10.244.2.6', 8080]])],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.20,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.20'] },
        'KUBE-NODE-PORT-LOCAL-TCP': { type: 'bitmap:port', entries: ['30080'] },
        'KUBE-NODE-PORT-TCP': { type: 'bitmap:port', entries: ['30080'] },
      },
      boundAddresses: ['10.96.0.20'],
      setCount: 17,
    },
  },
  {
    name: 'ITP=Local: the ClusterIP gets only node-local endpoints',
    services: [service('web', { clusterIP: '10.96.0.10', internalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 80 }] })],
    slices: [webSlice],
    want: {
      virtualServers: [vs('TCP', '10.96.0.10', 80, [['10.244.1.5', 8080]])],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.10,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.10'] },
        'KUBE-LOOP-BACK': { type: 'hash:ip,port,ip', entries: ['10.244.1.5,tcp:8080,10.244.1.5'] },
      },
      boundAddresses: ['10.96.0.10'],
      setCount: 17,
    },
  },
  {
    name: 'ITP=Local with no local endpoint and no external use: no real server (cluster endpoints are never computed)',
    services: [service('web', { clusterIP: '10.96.0.10', internalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 80 }] })],
    slices: [remoteOnly],
    want: {
      virtualServers: [vs('TCP', '10.96.0.10', 80, [])],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.10,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.10'] },
      },
      boundAddresses: ['10.96.0.10'],
      setCount: 17,
    },
  },
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

function lbWithRanges(ranges: string[]): Service {
  return service('shop', {
    type: 'LoadBalancer',
    clusterIP: '10.96.0.40',
    loadBalancerSourceRanges: ranges,
    ports: [{ name: 'https', port: 443, nodePort: 31443 }],
  }, { loadBalancer: { ingress: [{ ip: '192.0.2.100' }] } });
}

/** A ready endpoint with zone and node hints (an empty list: no hint of that kind). */
function hinted(address: string, zones: string[], nodes: string[]): Endpoint {
  const e = endpoint(address, { ready: true });
  e.hints = { ...(zones.length ? { forZones: zones.map((name) => ({ name })) } : {}), ...(nodes.length ? { forNodes: nodes.map((name) => ({ name })) } : {}) };
  return e;
}

function clusterIPWith(realServers: Array<[string, number]>, o: { scheduler?: string; timeout?: number } = {}): Summary {
  return {
    virtualServers: [vs('TCP', '10.96.0.10', 80, realServers, o)],
    ipsets: {
      'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.10,tcp:80'] },
      'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.10'] },
    },
    boundAddresses: ['10.96.0.10'],
    setCount: 17,
  };
}

for (const c of cases) {
  t.test(c.name, async (t) => {
    const desired = desiredState({ services: c.services, endpointSlices: c.slices ?? [] }, c.node ?? nodeA, defaultProxyConfig(c.config));
    t.strictSame(summary(desired), c.want);
  });
}

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

t.test('iptables for one ClusterIP service (defaults: no local detector, so src,dst masquerade)', async (t) => {
  const desired = desiredState({ services: [clusterIPWeb], endpointSlices: [webSlice] }, nodeA, defaultProxyConfig());
  t.equal(
    desired.iptables.get('inet'),
    [
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-POSTROUTING - [0:0]',
      ':KUBE-NODE-PORT - [0:0]',
      ':KUBE-LOAD-BALANCER - [0:0]',
      ':KUBE-MARK-MASQ - [0:0]',
      '-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN',
      '-A KUBE-POSTROUTING -m comment --comment "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose" -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE',
      '-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP src,dst -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT',
      '-A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT',
      '-A KUBE-POSTROUTING -m mark ! --mark 0x00004000/0x00004000 -j RETURN',
      '-A KUBE-POSTROUTING -j MARK --xor-mark 0x00004000',
      '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
      '-A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000',
      'COMMIT',
      '*filter',
      ':KUBE-FORWARD - [0:0]',
      ':KUBE-NODE-PORT - [0:0]',
      ':KUBE-PROXY-FIREWALL - [0:0]',
      ':KUBE-SOURCE-RANGES-FIREWALL - [0:0]',
      ':KUBE-IPVS-FILTER - [0:0]',
      ':KUBE-IPVS-OUT-FILTER - [0:0]',
      '-A KUBE-SOURCE-RANGES-FIREWALL -j DROP',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x00004000/0x00004000 -j ACCEPT',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      '-A KUBE-NODE-PORT -m comment --comment "Kubernetes health check node port" -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j ACCEPT',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-LOAD-BALANCER dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP-LOCAL dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT',
      'COMMIT',
      '',
    ].join('\n'),
  );
});

t.test('iptables for a LoadBalancer with source ranges excluding the node, --cluster-cidr, masquerade bit 15', async (t) => {
  const desired = desiredState(
    { services: [lbWithRanges(['203.0.113.0/24'])], endpointSlices: [] },
    nodeA,
    defaultProxyConfig({ clusterCIDRs: ['10.244.0.0/16'], masqueradeBit: 15, randomFully: false }),
  );
  t.equal(
    desired.iptables.get('inet'),
    [
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-POSTROUTING - [0:0]',
      ':KUBE-NODE-PORT - [0:0]',
      ':KUBE-LOAD-BALANCER - [0:0]',
      ':KUBE-MARK-MASQ - [0:0]',
      '-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN',
      '-A KUBE-SERVICES -m comment --comment "Kubernetes service lb portal" -m set --match-set KUBE-LOAD-BALANCER dst,dst -j KUBE-LOAD-BALANCER',
      '-A KUBE-NODE-PORT -p tcp -m comment --comment "Kubernetes nodeport TCP port for masquerade purpose" -m set --match-set KUBE-NODE-PORT-TCP dst -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT',
      '-A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT',
      '-A KUBE-SERVICES -m set --match-set KUBE-LOAD-BALANCER dst,dst -j ACCEPT',
      '-A KUBE-POSTROUTING -m mark ! --mark 0x00008000/0x00008000 -j RETURN',
      '-A KUBE-POSTROUTING -j MARK --xor-mark 0x00008000',
      '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE',
      '-A KUBE-MARK-MASQ -j MARK --or-mark 0x00008000',
      'COMMIT',
      '*filter',
      ':KUBE-FORWARD - [0:0]',
      ':KUBE-NODE-PORT - [0:0]',
      ':KUBE-PROXY-FIREWALL - [0:0]',
      ':KUBE-SOURCE-RANGES-FIREWALL - [0:0]',
      ':KUBE-IPVS-FILTER - [0:0]',
      ':KUBE-IPVS-OUT-FILTER - [0:0]',
      '-A KUBE-PROXY-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port for load balancer with sourceRange" -m set --match-set KUBE-LOAD-BALANCER-FW dst,dst -j KUBE-SOURCE-RANGES-FIREWALL',
      '-A KUBE-SOURCE-RANGES-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port + source cidr for packet filter purpose" -m set --match-set KUBE-LOAD-BALANCER-SOURCE-CIDR dst,dst,src -j RETURN',
      '-A KUBE-SOURCE-RANGES-FIREWALL -j DROP',
      '-A KUBE-IPVS-OUT-FILTER -s 192.0.2.100 -m ipvs --vaddr 192.0.2.100 --vproto tcp --vport 443 -j DROP',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x00008000/0x00008000 -j ACCEPT',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      '-A KUBE-NODE-PORT -m comment --comment "Kubernetes health check node port" -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j ACCEPT',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-LOAD-BALANCER dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP-LOCAL dst,dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j RETURN',
      '-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT',
      'COMMIT',
      '',
    ].join('\n'),
  );
});

t.test('iptables: --masquerade-all, externalIPs and IPv6 loopback', async (t) => {
  const desired = desiredState(
    { services: [service('web', { clusterIP: 'fd00:96::10', externalIPs: ['2001:db8::10'], ports: [{ name: 'http', port: 80 }] })], endpointSlices: [] },
    { name: 'node-a', addresses: ['fd00:1::10'] },
    defaultProxyConfig({ masqueradeAll: true }),
  );
  const nat = desired.iptables.get('inet6')!.split('COMMIT')[0];
  t.match(nat, '-A KUBE-SERVICES -s ::1/128 -j RETURN');
  t.match(nat, '-m set --match-set KUBE-6-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ');
  t.match(nat, '-m set --match-set KUBE-6-EXTERNAL-IP dst,dst -j KUBE-MARK-MASQ\n');
  t.match(nat, '-m set --match-set KUBE-6-EXTERNAL-IP dst,dst -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT\n');
  t.match(nat, '-m set --match-set KUBE-6-EXTERNAL-IP dst,dst -m addrtype --dst-type LOCAL -j ACCEPT\n');
  t.equal(desired.iptables.get('inet'), undefined);
});
