/**
 * `kube-proxy-ipvs plan`: what the proxy would program for a set of
 * manifests, printed as JSON, without touching the kernel. It takes the
 * proxy's own flags and --config, resolved by the same code, and works out
 * the node the way the proxy does (nodeInfoFor), so the two cannot
 * disagree; flags that only matter to a running proxy are accepted and
 * have no effect. Without a kernel to read the interfaces from, the node's
 * declared addresses stand in for them (NodePorts, "already local").
 */
import { formatRule } from 'ipvs-netlink';
import type { AddressFamily } from 'ipvs-netlink/address';
import { desiredState } from '../desired/known-objects.js';
import { loadManifests } from '../kubernetes/manifests.js';
import { planOutput, type PlanOutput } from '../plan/plan-json.js';
import { resolveOptions } from '../proxy/resolve-options.js';
import { OptionsError, proxyConfigOf, startingNodeInfo, type ProxyOptions } from '../proxy/options.js';

function planFor(options: ProxyOptions): PlanOutput {
  if (!options.manifests) throw new OptionsError('plan reads its objects from --manifests PATH (a YAML or JSON file, or a folder of them)');
  const manifests = loadManifests(options.manifests);
  // A dual-stack host, as the proxy finds on a host with both families: every family is served whatever the node's addresses.
  const node = {
    ...startingNodeInfo(
      options,
      manifests.nodes.find((n) => n.metadata.name === options.hostnameOverride),
    ),
    families: ['inet', 'inet6'] as AddressFamily[],
  };
  return planOutput(desiredState(manifests, node, proxyConfigOf(options)), formatRule);
}

/** `plan [flags]`: prints the IPVS virtual servers, kube-ipvs0 addresses, and ipsets and iptables rules (or with --ipvs-rules-backend=nftables, the nftables tables) the proxy would program for --manifests, without touching the kernel. */
export function runPlan(argv: readonly string[]): void {
  process.stdout.write(JSON.stringify(planFor(resolveOptions(argv).options), null, 2) + '\n');
}
