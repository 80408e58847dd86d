#!/usr/bin/env node
/**
 * The kube-proxy-ipvs binary. Each command registers itself from its own
 * file: the proxy (the default command, run.ts) and `plan`.
 */
import { Command } from 'commander';
import { registerPlanCommand } from './plan.js';
import { registerRunCommand } from './run.js';
import { versionOutput } from './version.js';

function buildProgram(): Command {
  // Positional options: the proxy's flags and plan's share names (--manifests...); each command parses its own.
  const program = new Command('kube-proxy-ipvs').description('An IPVS-mode kube-proxy built on ipvs-netlink').enablePositionalOptions();
  // kube-proxy's --version: a bare --version means true; its values are true, false, raw or vX.Y.Z.
  program.option('--version [value]', 'print version information and quit; --version=raw prints the details');
  program.hook('preAction', (command) => {
    const text = versionOutput(command.opts<{ version?: string | boolean }>().version);
    if (text !== undefined) {
      process.stdout.write(`${text}\n`);
      process.exit(0);
    }
  });
  registerRunCommand(program);
  registerPlanCommand(program);
  return program;
}

try {
  await buildProgram().parseAsync(process.argv);
} catch (e) {
  process.stderr.write(`kube-proxy-ipvs: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
}
