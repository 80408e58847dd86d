/**
 * --detect-local-mode=NodeCIDR and the Node's spec.podCIDRs, as kube-proxy's
 * NodeManager (pkg/proxy/nodemanager) handles them: the ranges are read
 * once, at start, after the node's IPs (kube-proxy waits up to 5 minutes
 * more for them, looking every second, and fails the start without them);
 * the rules keep those ranges, and a Node update that changes them ends
 * the process (exit 1, after "PodCIDRs changed for the node") so that it
 * starts again with the new ones. Other modes never look at them.
 */
import type { Logger } from 'pino';
import type { Node } from '../kubernetes/model.js';
import { podCIDRsOf } from '../kubernetes/node.js';
import type { Clock } from './clock.js';

/** podCIDRsTimeout: how long the start waits for the ranges once the node's IPs are known. */
export const POD_CIDRS_WAIT_MS = 5 * 60_000;
/** pollInterval. */
export const POD_CIDRS_POLL_MS = 1000;

/** reflect.DeepEqual of the two lists: the same ranges in the same order. */
export function podCIDRsChanged(started: readonly string[], node: Node): boolean {
  const now = podCIDRsOf(node);
  return now.length !== started.length || now.some((c, i) => c !== started[i]);
}

/**
 * OnNodeChange's first check: in NodeCIDR mode, a Node whose ranges differ
 * from those the proxy started with is logged as upstream logs it and ends
 * the process with status 1.
 */
export function exitIfPodCIDRsChanged(started: readonly string[], node: Node, log: Logger, exit: (code: number) => void = (code) => process.exit(code)): void {
  if (!podCIDRsChanged(started, node)) return;
  log.info({ node: node.metadata.name, newPodCIDRs: podCIDRsOf(node), oldPodCIDRs: [...started] }, 'PodCIDRs changed for the node');
  exit(1);
}

/**
 * The start's wait in NodeCIDR mode: resolves once the Node (as `nodeOf`
 * returns it) has pod CIDRs; after POD_CIDRS_WAIT_MS without them, throws
 * upstream's error (no Node at all, or a Node without ranges). `stopped`
 * ends the wait early, quietly.
 */
export async function waitForPodCIDRs(nodeOf: () => Node | undefined, nodeName: string, clock: Clock, stopped: () => boolean = () => false): Promise<void> {
  const deadline = clock.now() + POD_CIDRS_WAIT_MS;
  while (podCIDRsOf(nodeOf()).length === 0) {
    if (stopped()) return;
    if (clock.now() >= deadline) {
      throw new Error(nodeOf() === undefined ? `timeout waiting for node "${nodeName}" to exist` : `timeout waiting for PodCIDR allocation on node "${nodeName}"`);
    }
    await new Promise<void>((resolve) => clock.setTimeout(resolve, POD_CIDRS_POLL_MS));
  }
}
