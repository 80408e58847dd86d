/**
 * A fixed piece of JavaScript, timed: objects made, serialised, parsed and
 * sorted, as a proxy's sync handles its Services. Run in each kernel the
 * benchmarks use and on the host, it says how much slower a sandbox runs
 * JavaScript (bench/kernel-costs.mjs). Prints one line:
 * js_first_ms X js_best_ms Y (the first round, compiling as it goes, and
 * the best of ROUNDS).
 *
 *   node bench/js-cost-probe.mjs [ROUNDS]   (default 5)
 */
const rounds = Number(process.argv[2] ?? 5);

function work() {
  const xs = [];
  for (let i = 0; i < 50_000; i++) xs.push({ name: `svc-${(i * 7919) % 50_000}`, port: i & 0xffff, addresses: [`10.0.${(i >> 8) & 255}.${i & 255}`] });
  const back = JSON.parse(JSON.stringify(xs));
  back.sort((p, q) => (p.name < q.name ? -1 : p.name > q.name ? 1 : 0));
  return back.length;
}

const times = [];
for (let r = 0; r < rounds; r++) {
  const t = process.hrtime.bigint();
  if (work() !== 50_000) throw new Error('js-cost-probe: wrong count');
  times.push(Number(process.hrtime.bigint() - t) / 1e6);
}
console.log(`js_first_ms ${times[0].toFixed(2)} js_best_ms ${Math.min(...times).toFixed(2)}`);
