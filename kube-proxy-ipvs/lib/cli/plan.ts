/**
 * `kube-proxy-ipvs plan`: what the proxy would program for a set of
 * manifests, printed as JSON, without touching the kernel.
 */
import type { Command } from 'commander';
import { loadManifests } from '../kubernetes/manifests.js';
import { defaultProxyConfig, type NodeInfo } from '../kubernetes/model.js';
import { planOutput, type PlanOutput } from '../plan/plan-json.js';
import { desiredState } from '../desired/known-objects.js';

export interface PlanFlags {
  manifests: string;
  hostnameOverride: string;
  nodeIp?: string;
  ipvsScheduler: string;
  masqueradeAll: boolean;
  clusterCidr?: string;
  nodeportAddresses?: string;
}

export function runPlan(flags: PlanFlags): PlanOutput {
  const manifests = loadManifests(flags.manifests);
  const nodeObject = manifests.nodes.find((n) => n.metadata.name === flags.hostnameOverride);
  // --node-ip wins; otherwise the InternalIPs of this node's Node object, as kube-proxy falls back to.
  const addresses = flags.nodeIp
    ? list(flags.nodeIp)
    : (nodeObject?.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address);
  if (addresses.length === 0) throw new Error(`no node address: pass --node-ip, or include Node ${flags.hostnameOverride} with InternalIP addresses`);
  const node: NodeInfo = { name: flags.hostnameOverride, addresses, labels: nodeObject?.metadata.labels };
  const config = defaultProxyConfig({
    scheduler: flags.ipvsScheduler,
    masqueradeAll: flags.masqueradeAll,
    clusterCIDRs: list(flags.clusterCidr),
    nodePortAddresses: list(flags.nodeportAddresses),
  });
  return planOutput(desiredState(manifests, node, config));
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function registerPlanCommand(program: Command): void {
  program
    .command('plan')
    .description('print the IPVS virtual servers, ipsets, kube-ipvs0 addresses and iptables rules for a set of manifests, without touching the kernel')
    .requiredOption('--manifests <path>', 'a YAML file or a folder of them (Services, EndpointSlices, Nodes; multi-document and kind: List)')
    .requiredOption('--hostname-override <name>', 'this node\'s name: endpoints with this nodeName are local')
    .option('--node-ip <ips>', 'the node\'s addresses, comma-separated (one per family for dual-stack)')
    .option('--ipvs-scheduler <name>', 'IPVS scheduler', 'rr')
    .option('--masquerade-all', 'SNAT all traffic to ClusterIPs', false)
    .option('--cluster-cidr <cidrs>', 'pod CIDRs, comma-separated; traffic from outside them to a ClusterIP is masqueraded')
    .option('--nodeport-addresses <cidrs>', 'CIDRs (or "primary") that narrow the node addresses NodePorts listen on')
    .action((flags: PlanFlags) => {
      process.stdout.write(JSON.stringify(runPlan(flags), null, 2) + '\n');
    });
}
