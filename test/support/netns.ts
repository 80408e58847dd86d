/**
 * Fresh network namespaces for kernel tests. IPVS and ipset state is per
 * namespace, so each test gets its own, and the reference tools run inside
 * it with `ip netns exec`.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Netns {
  /** The name under /run/netns. */
  name: string;
  /** The path to hand to `Ipvs.open({ netns })` / `Ipset.open({ netns })`. */
  path: string;
  /** Runs a program inside the namespace; rejects on a non-zero exit. */
  exec(file: string, args: string[], input?: string): Promise<string>;
  /** Like exec, but resolves with the exit code and both streams. */
  tryExec(file: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }>;
}

/**
 * A new namespace, its loopback up (as a container's is). `loopback: 'down'`
 * leaves it as `ip netns add` makes it: no address and no routing table yet.
 */
export async function createNetns(prefix = 'ipvsnl', opts: { loopback?: 'up' | 'down' } = {}): Promise<Netns> {
  const name = `${prefix}-${process.pid}-${randomBytes(3).toString('hex')}`;
  await run('ip', ['netns', 'add', name]);
  const ns: Netns = {
    name,
    path: `/run/netns/${name}`,
    async exec(file, args, input) {
      const r = await ns.tryExec(file, args, input);
      if (r.code !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
      return r.stdout;
    },
    tryExec(file, args, input) {
      return new Promise((resolve) => {
        const child = execFile('ip', ['netns', 'exec', name, file, ...args], { maxBuffer: 256 << 20 }, (err, stdout, stderr) => {
          const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        });
        if (input !== undefined) child.stdin?.end(input);
        else child.stdin?.end();
      });
    },
  };
  if (opts.loopback !== 'down') await ns.exec('ip', ['link', 'set', 'lo', 'up']);
  return ns;
}

export async function deleteNetns(ns: Netns): Promise<void> {
  await run('ip', ['netns', 'delete', ns.name]).catch(() => undefined);
}

interface TapLike {
  teardown(fn: () => unknown): void;
}

/** Creates a namespace that is deleted when the test ends. */
export async function freshNetns(t: TapLike, prefix?: string, opts?: { loopback?: 'up' | 'down' }): Promise<Netns> {
  const ns = await createNetns(prefix, opts);
  t.teardown(() => deleteNetns(ns));
  return ns;
}

/** A veth pair from `a` (end `aName`, address `aAddr`) to `b` (`bName`, `bAddr`), both ends up. */
export async function vethLink(a: Netns, aName: string, aAddr: string, b: Netns, bName: string, bAddr: string): Promise<void> {
  await a.exec('ip', ['link', 'add', aName, 'type', 'veth', 'peer', 'name', bName, 'netns', b.name]);
  await a.exec('ip', ['addr', 'add', aAddr, 'dev', aName]);
  await a.exec('ip', ['link', 'set', aName, 'up']);
  await b.exec('ip', ['addr', 'add', bAddr, 'dev', bName]);
  await b.exec('ip', ['link', 'set', bName, 'up']);
}
