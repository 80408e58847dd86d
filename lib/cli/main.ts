#!/usr/bin/env node
/**
 * The kube-proxy-ipvs binary. Each subcommand registers itself from its own
 * file; the proxy itself will join `plan` here.
 */
import { Command } from 'commander';
import { registerPlanCommand } from './plan.js';

function buildProgram(): Command {
  const program = new Command('kube-proxy-ipvs').description('An IPVS-mode kube-proxy built on ipvs-netlink');
  registerPlanCommand(program);
  return program;
}

try {
  await buildProgram().parseAsync(process.argv);
} catch (e) {
  process.stderr.write(`kube-proxy-ipvs: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
}
