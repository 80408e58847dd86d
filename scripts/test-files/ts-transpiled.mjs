/**
 * --import'ed into every node process of a sandbox guest whose tests run through
 * test-files.sh (scripts/test.sh's kernel tests, scripts/qemu/tap.sh): serves
 * the project's TypeScript from what ts-transpile.mjs made on the host and
 * stands in for ts-node, which tap would load into each test process (seconds
 * a file under user-mode-linux, minutes under emulation). See
 * ts-transpiled-hooks.mjs.
 */
import { register } from 'node:module';

register('./ts-transpiled-hooks.mjs', import.meta.url);
