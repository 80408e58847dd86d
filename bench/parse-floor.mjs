/**
 * The least a Node program does to take a cluster in: start, read every
 * JSON file in DIR and JSON.parse it; nothing is checked or kept. Against
 * this, the proxy's cold start also reads YAML, checks every object, plans
 * and programs (bench/controller.mjs times it with /usr/bin/time, process
 * start included).
 *
 *   node bench/parse-floor.mjs DIR   -> "objects N"
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
let objects = 0;
for (const f of readdirSync(dir)) if (f.endsWith('.json')) objects += JSON.parse(readFileSync(path.join(dir, f), 'utf8')).length;
console.log(`objects ${objects}`);
