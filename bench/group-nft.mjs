/**
 * Group "nft": the proxy's two rules backends side by side, iptables +
 * ipset against one nftables table, on this host's kernel (the rules part
 * needs no IPVS; bench/nft-vs-iptables.mjs says what is measured). Its
 * table is a section of BENCHMARKS.md of its own, between its markers,
 * which the script rewrites at the full size; nothing goes into the
 * generated block. Results: bench/results/nft-vs-iptables[-small].json.
 */
import path from 'node:path';

const fileOf = (ctx) => path.join(ctx.results, `nft-vs-iptables${ctx.suffix}.json`);

export default {
  name: 'nft',
  covers: "the proxy's rules backends (iptables + ipset, nftables)",
  files: (ctx) => [fileOf(ctx)],
  run(ctx) {
    const markdown = ctx.small ? [] : ['--markdown', path.join(ctx.root, 'BENCHMARKS.md')];
    ctx.run(process.execPath, ['bench/nft-vs-iptables.mjs', '--size', ctx.small ? 'small' : 'full', '--results', ctx.results, ...markdown]);
    ctx.expectWritten(fileOf(ctx));
  },
  report: () => [],
};
