// Runs several tap test files in this one process, in order: one start of
// the runtime instead of one per file (it matters under qemu-user, where a
// start costs seconds). Arguments: the files.
import { pathToFileURL } from 'node:url';
import path from 'node:path';

for (const file of process.argv.slice(2)) await import(pathToFileURL(path.resolve(file)).href);
