/**
 * --import'ed into every node process of a QEMU guest run by scripts/qemu/tap.sh:
 * serves the project's TypeScript from what ts-transpile.mjs made on the host
 * and stands in for ts-node, which tap would load into each test process
 * (minutes there under emulation). See ts-transpiled-hooks.mjs.
 */
import { register } from 'node:module';

register('./ts-transpiled-hooks.mjs', import.meta.url);
