#!/usr/bin/env -S node --max-semi-space-size=2
/**
 * The kube-proxy-ipvs binary: `kube-proxy-ipvs [flags]` runs the proxy
 * (run.ts), `kube-proxy-ipvs plan [flags]` prints what it would program
 * (plan.ts). Both read kube-proxy's command line with pflag's syntax.
 * Exit codes as kube-proxy's (cobra + component-base cli.Run): a flag
 * error prints the usage and `Error: ...` and exits 1; a configuration or
 * run error is logged as "command failed" and exits 1; plan, our own,
 * writes its error as one plain line.
 *
 * The first line gives node a young generation of 2 MiB semi-spaces: on
 * Node.js 24 it otherwise grows to 64 MiB during a cold start and stays
 * resident while the proxy idles between resyncs. V8 sizes it only when it
 * starts, so it cannot be set from here (env -S: coreutils 8.30 or later).
 */
import { FlagError } from '../proxy/flag-parser.js';
import { usage } from '../proxy/flags.js';
import { makeLogger } from '../logging/logger.js';
import { OptionsError } from '../proxy/options.js';
import { runPlan } from './plan.js';
import { loggerOf, run } from './run.js';

const argv = process.argv.slice(2);
const planning = argv[0] === 'plan';
try {
  if (planning) runPlan(argv.slice(1));
  else await run(argv);
} catch (e) {
  if (e instanceof FlagError) {
    process.stderr.write(`${usage()}\nError: ${e.message}\n`);
  } else if (planning) {
    // plan is this project's own command, read by people: a plain line, no log format to match.
    process.stderr.write(`kube-proxy-ipvs plan: ${e instanceof Error ? e.message : String(e)}\n`);
  } else {
    const stage = e instanceof OptionsError ? (e.message.startsWith('invalid configuration') ? 'failed validate: ' : 'failed complete: ') : '';
    const message = e instanceof Error ? e.message : String(e);
    // component-base's cli.Run, with logging set up: the run's own logger (its format), or klog's default text one.
    (loggerOf(e) ?? makeLogger(0)).error({ err: `${stage}${message}` }, 'command failed');
  }
  process.exitCode = 1;
}
