/**
 * --import'ed into every node process whose tests run through test-files.sh
 * (scripts/test.sh's unit, host and kernel tests, scripts/qemu/tap.sh):
 * serves the project's TypeScript from what ts-transpile.mjs made on the host
 * and stands in for ts-node, which tap's runner would load into each test
 * process (seconds a file on the host, more under user-mode-linux, minutes
 * under emulation). See ts-transpiled-hooks.mjs.
 */
import * as module from 'node:module';
import { syncHooks } from './ts-transpiled-hooks.mjs';

if (typeof module.registerHooks === 'function') module.registerHooks(syncHooks);
else module.register('./ts-transpiled-hooks.mjs', import.meta.url);
