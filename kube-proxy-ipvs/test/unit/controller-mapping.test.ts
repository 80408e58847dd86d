/**
 * Services + EndpointSlices → desired state, one case per kube-proxy
 * behaviour: the Service types and the traffic policies (which endpoints a
 * port gets, and other rules: controller-mapping-selection.test.ts; the
 * iptables rules: controller-mapping-iptables.test.ts). Each case asserts
 * the whole state: virtual servers with their real servers, every set that
 * has entries (the others exist and are empty: setCount), and the
 * addresses bound to kube-ipvs0.
 */
import { endpoint, service, slice } from '../support/k8s-objects.js';
import { clusterIPWeb, lbWithRanges, remoteOnly, runCases, vs, webSlice, type Case } from '../support/mapping-fixtures.js';

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
    name: "LoadBalancer ingress ipModes: VIP is a local VIP; one this release does not know is not (IsVIPMode), and the rest is programmed",
    services: [
      service('shop', { type: 'LoadBalancer', clusterIP: '10.96.0.40', ports: [{ name: 'https', port: 443, nodePort: 31443 }] }, {
        loadBalancer: { ingress: [{ ip: '192.0.2.100', ipMode: 'VIP' }, { ip: '192.0.2.101', ipMode: 'Router' }] },
      }),
    ],
    slices: [],
    want: {
      virtualServers: [vs('TCP', '10.96.0.40', 443, []), vs('TCP', '192.0.2.100', 443, []), vs('TCP', '192.168.1.10', 31443, [])],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.40,tcp:443'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.40', '192.0.2.100'] },
        'KUBE-LOAD-BALANCER': { type: 'hash:ip,port', entries: ['192.0.2.100,tcp:443'] },
        'KUBE-NODE-PORT-TCP': { type: 'bitmap:port', entries: ['31443'] },
      },
      boundAddresses: ['10.96.0.40', '192.0.2.100'],
      setCount: 17,
    },
  },
  {
    name: 'an IPv4-mapped IPv6 address in an IPv4 slice and among externalIPs is the IPv4 address, as ParseIPSloppy reads it',
    services: [service('web', { clusterIP: '10.96.0.50', externalIPs: ['::ffff:203.0.113.10'], ports: [{ name: 'http', port: 80 }] })],
    slices: [slice('web', [endpoint('::ffff:10.244.2.6', { node: 'node-b' })], [{ name: 'http', port: 8080 }])],
    want: {
      virtualServers: [vs('TCP', '10.96.0.50', 80, [['10.244.2.6', 8080]]), vs('TCP', '203.0.113.10', 80, [['10.244.2.6', 8080]])],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.50,tcp:80'] },
        'KUBE-EXTERNAL-IP': { type: 'hash:ip,port', entries: ['203.0.113.10,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.50', '203.0.113.10'] },
      },
      boundAddresses: ['10.96.0.50', '203.0.113.10'],
      setCount: 17,
    },
  },
  {
    name: "an endpoint address of the other family than its slice's is dropped, as addEndpoints drops it",
    services: [service('web', { clusterIP: '10.96.0.50', ports: [{ name: 'http', port: 80 }] })],
    slices: [slice('web', [endpoint('10.244.2.6', { node: 'node-b' }), endpoint('fd00::6', { node: 'node-b' })], [{ name: 'http', port: 8080 }])],
    want: {
      virtualServers: [vs('TCP', '10.96.0.50', 80, [['10.244.2.6', 8080]])],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.50,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.50'] },
      },
      boundAddresses: ['10.96.0.50'],
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
    name: 'addresses as kube-proxy reads them: IPv4 parts with leading zeros are decimal (ParseIPSloppy), blank externalIPs are skipped',
    services: [
      service('web', {
        type: 'LoadBalancer',
        clusterIP: '10.96.0.050',
        clusterIPs: ['10.96.0.050'],
        externalIPs: ['', '203.0.113.010'],
        loadBalancerSourceRanges: [' 010.0.0.0/8 ', ''],
        ports: [{ name: 'http', port: 80 }],
      }, { loadBalancer: { ingress: [{ ip: '' }, { ip: '198.51.100.007' }] } }),
    ],
    slices: [slice('web', [endpoint('10.244.002.6', { node: 'node-b' })], [{ name: 'http', port: 8080 }])],
    want: {
      virtualServers: [
        vs('TCP', '10.96.0.50', 80, [['10.244.2.6', 8080]]),
        vs('TCP', '198.51.100.7', 80, [['10.244.2.6', 8080]]),
        vs('TCP', '203.0.113.10', 80, [['10.244.2.6', 8080]]),
      ],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.50,tcp:80'] },
        'KUBE-EXTERNAL-IP': { type: 'hash:ip,port', entries: ['203.0.113.10,tcp:80'] },
        'KUBE-LOAD-BALANCER': { type: 'hash:ip,port', entries: ['198.51.100.7,tcp:80'] },
        'KUBE-LOAD-BALANCER-FW': { type: 'hash:ip,port', entries: ['198.51.100.7,tcp:80'] },
        'KUBE-LOAD-BALANCER-SOURCE-CIDR': { type: 'hash:ip,port,net', entries: ['198.51.100.7,tcp:80,10.0.0.0/8'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.50', '198.51.100.7', '203.0.113.10'] },
      },
      boundAddresses: ['10.96.0.50', '198.51.100.7', '203.0.113.10'],
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
    name: 'a NodePort with no node address to serve it: skipped, and with it the port\'s health-check entry (as the loop\'s continue skips it)',
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
    config: { nodePortAddresses: ['172.16.0.0/12'] },
    want: {
      virtualServers: [
        vs('TCP', '10.96.0.60', 80, [['10.244.1.5', 8080], ['10.244.2.6', 8080]]),
        vs('TCP', '192.0.2.60', 80, [['10.244.1.5', 8080]]),
      ],
      ipsets: {
        'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.60,tcp:80'] },
        'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.60', '192.0.2.60'] },
        'KUBE-LOAD-BALANCER': { type: 'hash:ip,port', entries: ['192.0.2.60,tcp:80'] },
        'KUBE-LOAD-BALANCER-LOCAL': { type: 'hash:ip,port', entries: ['192.0.2.60,tcp:80'] },
        'KUBE-LOOP-BACK': { type: 'hash:ip,port,ip', entries: ['10.244.1.5,tcp:8080,10.244.1.5'] },
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
    name: 'ITP=Local and ETP=Local without a local endpoint: the ClusterIP and the NodePort fall back to cluster endpoints (an externally reachable port always computes them)',
    services: [service('web', { type: 'NodePort', clusterIP: '10.96.0.20', internalTrafficPolicy: 'Local', externalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 80, nodePort: 30080 }] })],
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
];

runCases(cases);
