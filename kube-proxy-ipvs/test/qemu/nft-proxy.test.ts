/**
 * The kube-proxy-ipvs binary with --ipvs-rules-backend=nftables, end to
 * end, in the QEMU kernel (IPVS and nf_tables together): what the iptables
 * path's proxy tests check with the binary (proxy-traffic, proxy-restart,
 * proxy-cleanup), on a manifests folder, against what ipvsadm, ip and nft
 * show and with real traffic.
 *
 * - the kernel holds what `plan` says: virtual servers, kube-ipvs0, and
 *   the ip table, whose sets and rules nft lists as planned (and an ip6
 *   one: the host serves both families); no KUBE-* iptables chain or ipset;
 * - /healthz, /livez and /metrics are served; the netlink counters name
 *   nftables;
 * - ClusterIP and NodePort reach both pods; LoadBalancer and externalIP
 *   with externalTrafficPolicy Cluster are masqueraded, with Local only the
 *   node's pod answers, seeing the client's own address, and the
 *   health-check node port counts it;
 * - a restart flushes nothing (the same ruleset, handles included, the
 *   same virtual servers, no netlink change at all) and an established
 *   connection keeps its backend across it;
 * - scaling up and down and deleting the Service are followed, as set
 *   elements only (every rule handle stays);
 * - --cleanup leaves no table (nft list tables), no virtual server and no
 *   kube-ipvs0.
 *
 * One binary start costs tens of seconds under emulation, so the file
 * starts it twice (and plan and cleanup once each) and checks everything
 * on those runs.
 */
import t from 'tap';
import { externalServiceYaml, metricValue, netlinkOps, nodeYaml, runCleanup, type RunningProxy, serviceHealth, serviceYaml, sliceYaml, startProxy, until, writeManifest } from '../support/proxy-env.js';
import { runPlan } from '../support/proxy-plan.js';
import { CLIENT_IP, httpd, iptablesLeftovers, kernelMatchesNftPlan, lineConnection, lineServer, NODE_IP, nftTables, nftTableView, PODS, ruleHandles, who, whoMany } from './nft-support.js';
import { podNetworks } from '../support/traffic.js';
import { scratchDir } from '../support/scratch.js';

/** Under emulation the file takes minutes, far past tap's default of 30 s (the file's, and each subtest's). */
const slow = { timeout: 1_500_000 };
t.setTimeout(3_000_000);
/** How long a node process of the binary may take to come up and sync, and an edit to be followed, under emulation. */
const START_MS = 240_000;
const FOLLOW_MS = 120_000;

/** A third pod, on this node, in be1's namespace. */
const BE3 = '10.244.1.12';
const FLAGS = ['--ipvs-rules-backend=nftables', '--nodeport-addresses', '192.168.10.0/24'];
const both = (from: string) => [`be1 from ${from === 'masqueraded' ? '10.244.1.1' : from}`, `be2 from ${from === 'masqueraded' ? '10.244.2.1' : from}`];
const web = (...pods: Array<{ ip: string; node?: string }>) => sliceYaml('web', pods);
const be1 = { ip: PODS.be1 };
const be2 = { ip: PODS.be2, node: 'node-b' };

t.test('the binary programs nftables: traffic, health, restart, scaling, cleanup', slow, async (main) => {
  const cluster = await podNetworks(main);
  const { node, client, pods } = cluster;
  await httpd(main, pods.be1, 'be1', 8080, PODS.be1);
  await httpd(main, pods.be2, 'be2', 8080, PODS.be2);
  await pods.be1.exec('ip', ['addr', 'add', `${BE3}/24`, 'dev', 'eth0']);
  await httpd(main, pods.be1, 'be3', 8080, BE3);
  await lineServer(main, pods.be1, 'be1', 9000);
  await lineServer(main, pods.be2, 'be2', 9000);

  const env = { node, dir: scratchDir('kp-nft-') };
  writeManifest(env, 'node.yaml', nodeYaml(NODE_IP));
  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10', 30080));
  writeManifest(env, 'web-slice.yaml', web(be1, be2));
  writeManifest(env, 'lb.yaml', externalServiceYaml({ name: 'lb', clusterIP: '10.96.0.20', nodePort: 30081, lbIP: '203.0.113.10', externalIP: '198.51.100.20' }));
  writeManifest(env, 'lb-slice.yaml', sliceYaml('lb', [be1, be2]));
  writeManifest(env, 'local.yaml', externalServiceYaml({ name: 'local', clusterIP: '10.96.0.30', nodePort: 30082, lbIP: '203.0.113.30', externalIP: '198.51.100.30', local: true, healthCheckNodePort: 32001 }));
  writeManifest(env, 'local-slice.yaml', sliceYaml('local', [be1, be2]));
  writeManifest(env, 'echo.yaml', serviceYaml('echo', '10.96.0.50', undefined, 9000, 9000));
  writeManifest(env, 'echo-slice.yaml', sliceYaml('echo', [be1, be2], 9000));

  const args = ['--manifests', env.dir, ...FLAGS];
  const first = await startProxy(main, env, args, { waitMs: START_MS });

  await main.test('the kernel holds what plan says, and nothing of iptables', slow, async (t) => {
    await kernelMatchesNftPlan(t, node, await runPlan(env.dir, FLAGS), 'first sync');
    // plan knows the node's families (IPv4); the proxy serves those the host's nf_tables has, as kube-proxy.
    t.same((await nftTableView(node)).tables, ['ip kube-proxy-ipvs', 'ip6 kube-proxy-ipvs'], 'one table per family, and no other');
    t.same(await iptablesLeftovers(node), [], 'no KUBE-* iptables chain, no ipset');
  });

  await main.test('health and metrics', slow, async (t) => {
    const healthz = await fetch(`${first.healthz}/healthz`);
    t.equal(healthz.status, 200, '/healthz: 200');
    t.match(await healthz.json(), { healthy: true, nodeEligible: true, status: { IPv4: { healthy: true } } });
    t.equal((await fetch(`${first.healthz}/livez`)).status, 200, '/livez: 200');
    t.equal(await (await fetch(`${first.metrics}/proxyMode`)).text(), 'ipvs', '/proxyMode');
    t.ok(((await metricValue(first, 'kubeproxy_sync_proxy_rules_duration_seconds_count')) ?? 0) >= 1, 'a sync counted');
    const ops = await netlinkOps(first, ['ipvs', 'ipset', 'rtnl', 'nftables']);
    t.ok(ops['nftables ok']! >= 1 && ops['ipvs ok']! >= 11 && ops['rtnl ok']! >= 1, `IPVS, addresses and the table over netlink (${JSON.stringify(ops)})`);
    t.equal(ops['ipset ok'] ?? 0, 0, 'no ipset call');
    t.equal((ops['nftables error'] ?? 0) + (ops['ipvs error'] ?? 0), 0, 'no refusal');
  });

  await main.test('every way in reaches the pods, masqueraded where kube-proxy masquerades', slow, async (t) => {
    t.same(await whoMany(node, '10.96.0.10', 4), both('masqueraded'), 'ClusterIP from the node: both pods');
    t.same(await whoMany(client, '10.96.0.10', 4), both(CLIENT_IP), 'ClusterIP from outside the pods: both, the client kept (no cluster CIDR given)');
    t.same(await whoMany(client, `${NODE_IP}:30080`, 4), both('masqueraded'), 'NodePort: both, masqueraded');
    t.same(await whoMany(client, '203.0.113.10', 4), both('masqueraded'), 'LoadBalancer, ETP=Cluster: masqueraded');
    t.same(await whoMany(client, '198.51.100.20', 4), both('masqueraded'), 'externalIP, ETP=Cluster: masqueraded');
    for (const [what, hostPort] of [['LoadBalancer', '203.0.113.30'], ['externalIP', '198.51.100.30'], ['NodePort', `${NODE_IP}:30082`]]) {
      t.same(await whoMany(client, hostPort, 3), [`be1 from ${CLIENT_IP}`], `${what}, ETP=Local: only the node's pod, which sees the client's own address`);
    }
    t.same(await whoMany(node, '10.96.0.30', 4), both('masqueraded'), 'that Service through its ClusterIP: both pods');
    t.same(await serviceHealth(client, `http://${NODE_IP}:32001/`), { code: 200, localEndpoints: 1 }, 'its health-check node port: 200, one local endpoint');
  });

  let second: RunningProxy | undefined;
  await main.test('a restart flushes nothing and keeps an established connection', slow, async (t) => {
    const conn = lineConnection(t, node, '10.96.0.50', 9000);
    const before = await conn.ask();
    t.match(before, /^be[12]$/, 'answered through the ClusterIP');
    const ruleset = await node.exec('nft', ['-j', 'list', 'ruleset']);
    const ipvs = await node.exec('ipvsadm', ['-Sn']);
    const addrs = await node.exec('ip', ['-o', 'addr', 'show', 'dev', 'kube-ipvs0']);
    t.equal(await first.stop(), 0, 'stopped cleanly on SIGTERM');
    t.equal(await node.exec('nft', ['-j', 'list', 'ruleset']), ruleset, 'stopping leaves the table');
    t.equal(await conn.ask(), before, 'the connection works while no proxy runs');

    // Stopped with the whole test, not this part of it.
    const again = (second = await startProxy(main, env, args, { waitMs: START_MS }));
    t.equal(await node.exec('nft', ['-j', 'list', 'ruleset']), ruleset, 'adopted: the same ruleset, handles and elements');
    t.equal(await node.exec('ipvsadm', ['-Sn']), ipvs, 'the same virtual servers');
    t.equal(await node.exec('ip', ['-o', 'addr', 'show', 'dev', 'kube-ipvs0']), addrs, 'the same addresses');
    t.equal(await conn.ask(), before, 'the same connection, the same backend');
    t.same(
      await netlinkOps(again, ['ipvs', 'rtnl', 'nftables']),
      { 'ipvs ok': 0, 'ipvs error': 0, 'rtnl ok': 0, 'rtnl error': 0, 'nftables ok': 0, 'nftables error': 0 },
      'the restarted proxy changed nothing over netlink (no transaction, no IPVS or address change)',
    );
  });

  await main.test('scaling and deletion are followed, as set elements', slow, async (t) => {
    const handles = await ruleHandles(node);
    // Weight 1: a real server that leaves with connections still counted (TIME_WAIT) stays at weight 0 until they expire.
    const realServers = async (vip: string) => (await node.exec('ipvsadm', ['-Sn'])).split('\n').filter((l) => l.startsWith(`-a -t ${vip} `) && l.endsWith(' -w 1'));
    writeManifest(env, 'web-slice.yaml', web(be1, be2, { ip: BE3 }));
    await until('three real servers', async () => (await realServers('10.96.0.10:80')).length === 3, FOLLOW_MS);
    t.same(await whoMany(node, '10.96.0.10', 6), [...both('masqueraded'), 'be3 from 10.244.1.1'].sort(), 'scaled up: all three answer');
    t.ok((await nftTableView(node)).sets['loop-back'].includes(`${BE3} . tcp . 8080 . ${BE3}`), 'the new local pod is in loop-back');

    writeManifest(env, 'web-slice.yaml', web({ ip: BE3 }));
    await until('one real server', async () => (await realServers('10.96.0.10:80')).length === 1, FOLLOW_MS);
    t.same(await whoMany(client, `${NODE_IP}:30080`, 3), ['be3 from 10.244.1.1'], 'scaled down: the NodePort reaches the one left');

    writeManifest(env, 'web.yaml', '');
    await until('the Service gone', async () => (await realServers('10.96.0.10:80')).length === 0, FOLLOW_MS);
    const { sets } = await nftTableView(node);
    t.notOk(sets['cluster-ip'].some((e) => e.startsWith('10.96.0.10 ')), 'its ClusterIP left cluster-ip');
    t.same(sets['node-port-tcp'], ['30081', '30082'], 'its NodePort left node-port-tcp');
    t.notOk(sets['ipvs-ips'].includes('10.96.0.10'), 'and ipvs-ips');
    t.type(await who(client, `${NODE_IP}:30080`), 'number', 'nothing answers the NodePort');
    t.equal(await ruleHandles(node), handles, 'every rule handle stayed: element changes only');
  });

  await main.test('--cleanup leaves no table', slow, async (t) => {
    t.equal(await second?.stop(), 0, 'the second proxy stopped cleanly');
    const r = await runCleanup(env, FLAGS);
    t.equal(r.code, 0, `cleanup exits 0${r.code ? `: ${r.stderr.slice(-2000)}` : ''}`);
    t.same(await nftTables(node), [], 'nft list tables: none');
    t.equal((await node.exec('ipvsadm', ['-Sn'])).trim(), '', 'no virtual server');
    t.not((await node.tryExec('ip', ['link', 'show', 'kube-ipvs0'])).code, 0, 'no kube-ipvs0');
    t.same(await iptablesLeftovers(node), [], 'no KUBE-* chain or ipset either');
    t.type(await who(client, '10.96.0.20'), 'number', 'nothing answers');
  });
});
