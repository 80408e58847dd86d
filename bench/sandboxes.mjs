/**
 * The two sandbox kernels the IPVS and proxy benchmarks run in, and how a
 * group runs a sequence of commands in one boot of either
 * (scripts/with-kernel.sh with WITH_KERNEL=uml or qemu).
 *
 * They distort a real kernel's costs in opposite directions, so a ratio
 * that holds in both should hold on metal; one that holds in one only is
 * not shown.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const SANDBOXES = {
  uml: {
    name: 'uml',
    label: 'user-mode-linux',
    withKernel: 'uml',
    // For results from before bench/kernel-costs.mjs measured it in each run (those booted it free to move between processors).
    distortion:
      'user-mode-linux runs user code near native speed (JavaScript ~2.6x slower than on this host) and makes every system call and page fault 40-120x dearer (getpid ~20 µs, a fresh page ~100 µs; spot measurements); its CPU accounting charges most of the guest kernel\'s work to user time. It inflates kernel work: it flatters whoever makes the fewest system calls and touches the fewest fresh pages.',
    meaning:
      'Its CPU accounting charges most of the guest kernel\'s work to user time. It inflates kernel work far more than user work: it flatters whoever makes the fewest system calls and touches the fewest fresh pages.',
  },
  qemu: {
    name: 'qemu',
    label: 'QEMU-TCG',
    withKernel: 'qemu',
    distortion:
      'QEMU-TCG emulates every instruction: JIT-compiled JavaScript ~33x slower than on this host, the kernel\'s work less (a system call ~8x, a page fault ~16x, a generic-netlink round trip ~22x; spot measurements, scripts/qemu/README.md). It inflates user work more than kernel work: it flatters a C tool against a Node program.',
    meaning:
      'It emulates every instruction, and inflates user work more than kernel work: it flatters a C tool against a Node program.',
  },
};

/** The kernel as a figure's column names it: "user-mode-linux 6.1.176", "QEMU-TCG 6.1.176 (Debian's 6.1.0-50-amd64)". */
export function kernelLabel(sandbox, result) {
  const sb = SANDBOXES[sandbox];
  // /proc/version: "... #1 SMP PREEMPT_DYNAMIC Debian 6.1.176-1 (2025-...)" (the compiler's "Debian 12.2.0-14" comes earlier).
  const debian = /SMP.* Debian (\d+\.\d+\.\d+)-/.exec(result?.kernelBuild ?? '')?.[1];
  if (sandbox === 'qemu') return `${sb.label} ${debian ?? ''} (Debian's ${result?.kernel ?? '?'})`.replace('  ', ' ');
  return `${sb?.label ?? sandbox} ${result?.kernel ?? ''}`.trim();
}

const quote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

/**
 * Boots `sandbox` once and runs each argv of `commands` in turn (cwd: the
 * project), their progress streaming through. Every command runs even if one
 * before it failed (the sizes of a ladder are independent); returns the exit
 * status of each, in order.
 */
export function runInSandbox({ root, say }, sandbox, commands, env = {}) {
  const sb = SANDBOXES[sandbox];
  if (!sb) throw new Error(`unknown sandbox '${sandbox}' (one of: ${Object.keys(SANDBOXES).join(', ')})`);
  // Each command's status, one a line, in a file both sides see (the guest's /tmp is its own).
  const statusFile = path.join(root, 'bench', '.build', `sandbox-statuses-${process.pid}`);
  mkdirSync(path.dirname(statusFile), { recursive: true });
  writeFileSync(statusFile, '');
  const script = commands.map((argv) => `${argv.map(quote).join(' ')}; echo $? >>${quote(statusFile)}`).join('\n');
  say(`${sb.label}: booting for ${commands.length} command(s)`);
  for (const argv of commands) say(`  $ ${argv.join(' ')}`);
  const r = spawnSync('bash', ['scripts/with-kernel.sh', 'bash', '-c', script], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, ...env, WITH_KERNEL: sb.withKernel },
  });
  const statuses = readFileSync(statusFile, 'utf8').split('\n').filter(Boolean).map(Number);
  rmSync(statusFile, { force: true });
  if (statuses.length !== commands.length)
    throw new Error(`${sb.label}: the sandbox ended (exit ${r.status ?? r.signal}) after ${statuses.length} of ${commands.length} commands; its messages are above`);
  return statuses;
}

/**
 * A group's ladder in one boot: argvFor(services, isHeadline, outFile) is the
 * command for one size, which writes its result to outFile. Returns
 * { sandbox, headline, sizes: { N: result }, failedSizes, skippedSizes };
 * throws when the headline size has no result (the others may fail:
 * saveLadder reports them). Sizes above ctx.maxServices are skipped; with
 * ctx.resume, a size whose result a stopped run left in bench/.build is
 * taken as it is instead of run again.
 */
export function runLadder(ctx, group, sandbox, cfg, argvFor) {
  const tmp = (n) => path.join(ctx.build, `${group}-${sandbox}-${n}${ctx.suffix}.json`);
  const sizes = cfg.sizes.filter((n) => n <= ctx.maxServices);
  const skippedSizes = cfg.sizes.filter((n) => n > ctx.maxServices);
  const kept = ctx.resume ? sizes.filter((n) => existsSync(tmp(n))) : [];
  for (const n of kept) ctx.say(`${group} in ${sandbox}: ${n} services: resuming with ${path.relative(ctx.root, tmp(n))} (${statSync(tmp(n)).mtime.toISOString()})`);
  const todo = sizes.filter((n) => !kept.includes(n));
  for (const n of todo) rmSync(tmp(n), { force: true });
  const commands = todo.map((n) => argvFor(n, n === cfg.headline, tmp(n)));
  const statuses = commands.length ? runInSandbox(ctx, sandbox, commands, { SANDBOX_MEM: process.env.SANDBOX_MEM ?? cfg.sandboxMem, SANDBOX_TIMEOUT: process.env.SANDBOX_TIMEOUT ?? String(cfg.timeoutS) }) : [];
  const out = { sandbox, headline: cfg.headline, sizes: {}, failedSizes: [], skippedSizes };
  for (const n of sizes) {
    const i = todo.indexOf(n);
    if ((i < 0 || (statuses[i] === 0 && ctx.writtenThisRun(tmp(n)))) && existsSync(tmp(n))) out.sizes[n] = JSON.parse(readFileSync(tmp(n), 'utf8'));
    else out.failedSizes.push({ services: n, exit: statuses[i] });
  }
  if (!out.sizes[cfg.headline]) throw new Error(`${group} in ${sandbox}: the headline size (${cfg.headline} services) did not complete${todo.includes(cfg.headline) ? ` (exit ${statuses[todo.indexOf(cfg.headline)]})` : ''}`);
  // Kept until the group's host-side steps are done: a stopped run can resume from them.
  out.cleanup = () => sizes.forEach((n) => rmSync(tmp(n), { force: true }));
  return out;
}

/** Writes a ladder's results to file; sizes that did not complete fail the run (the rest is kept). */
export function saveLadder(ctx, group, file, out) {
  const { cleanup, ...result } = out;
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  cleanup();
  if (out.failedSizes.length) ctx.fail(`${group} in ${out.sandbox}: sizes ${out.failedSizes.map((x) => `${x.services} (exit ${x.exit})`).join(', ')} did not complete`);
}
