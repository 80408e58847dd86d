/**
 * The nftables host tests' common steps: a library handle on a namespace,
 * and nft's own listings of it, without what differs between two equal
 * rulesets (handles, the time an element has left).
 */
import { Nftables } from '../../lib/nftables/index.js';
import type { Netns } from './netns.js';

/** An Nftables handle in `ns`, closed when the test ends. */
export async function openNftables(t: { teardown(fn: () => unknown): void }, ns: Netns): Promise<Nftables> {
  const nft = await Nftables.open({ netns: ns.path });
  t.teardown(() => nft.close());
  return nft;
}

/** `nft -j list ruleset`'s objects, without its metainfo, handles and time left. */
export async function nftJson(ns: Netns): Promise<unknown[]> {
  const j = JSON.parse(await ns.exec('nft', ['-j', 'list', 'ruleset'])) as { nftables: Array<Record<string, unknown>> };
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'handle' && k !== 'expires').map(([k, x]) => [k, strip(x)]));
    return v;
  };
  return j.nftables.filter((o) => !('metainfo' in o)).map(strip);
}

/** `nft list ruleset`, without handles and time left. */
export async function nftText(ns: Netns): Promise<string> {
  return (await ns.exec('nft', ['list', 'ruleset'])).replace(/ # handle \d+/g, '').replace(/ expires \S+/g, '');
}
