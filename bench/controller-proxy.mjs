/**
 * The kube-proxy-ipvs binary as the controller benchmarks run it: the real
 * `node kube-proxy-ipvs/dist/lib/cli/main.js` with --netns, started like a real process,
 * with bench/proxy-instrument.mjs preloaded so that every controller start,
 * sync, resync and drain is reported (time, netlink counters, CPU, memory)
 * on a pipe. Also reads the process's resident set from /proc. Benchmark 5's
 * floor (bench/change-floor.mjs) runs through it too, reporting the same way.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BINARY_NODE_FLAGS, MAIN } from '../kube-proxy-ipvs/test/support/binary.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const INSTRUMENT = path.join(here, 'proxy-instrument.mjs');
const CHANGE_FLOOR = path.join(here, 'change-floor.mjs');

let nextPort = 30000 + (process.pid % 500) * 4;

/** hrtime now, as the instrument writes it (BigInt nanoseconds, CLOCK_MONOTONIC). */
export const now = () => process.hrtime.bigint();
export const msBetween = (a, b) => Number(BigInt(b) - BigInt(a)) / 1e6;

export class ProxyProcess {
  /**
   * @param {object} o
   * @param {string} o.netns  /run/netns/NAME to program
   * @param {string[]} o.args the source (--manifests DIR or --master URL) and any other flags
   * @param {string} o.node   --hostname-override
   * @param {boolean} [o.floor] run bench/change-floor.mjs instead, with `args` (--master URL): benchmark 5's floor
   */
  constructor({ netns, args, node, floor }) {
    this.name = floor ? 'the change floor' : 'kube-proxy-ipvs';
    this.events = [];
    this.waiters = [];
    this.logTail = '';
    this.metricsAddress = `127.0.0.1:${nextPort++}`;
    const healthz = `127.0.0.1:${nextPort++}`;
    // No loaders or test settings from the environment: the binary runs as it would on a node.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && !k.startsWith('TAP') && !k.startsWith('_TAPJS')));
    env.BENCH_PROXY_EVENTS_FD = '3';
    // Profiling runs only: e.g. BENCH_PROXY_NODE_FLAGS="--cpu-prof --cpu-prof-dir=bench/.build/prof".
    const nodeFlags = (process.env.BENCH_PROXY_NODE_FLAGS ?? '').split(' ').filter(Boolean);
    this.startedAt = now();
    const argv = floor
      ? [...BINARY_NODE_FLAGS, CHANGE_FLOOR, '--netns', netns, ...args]
      : [...BINARY_NODE_FLAGS, ...nodeFlags, '--import', INSTRUMENT, MAIN, '--netns', netns, '--hostname-override', node, '--healthz-bind-address', healthz, '--metrics-bind-address', this.metricsAddress, ...args];
    this.child = spawn(process.execPath, argv, { stdio: ['ignore', 'ignore', 'pipe', 'pipe'], env });
    this.pid = this.child.pid;
    this.child.stderr.setEncoding('utf8').on('data', (d) => {
      this.logTail = (this.logTail + d).slice(-20000);
    });
    let buf = '';
    this.child.stdio[3].setEncoding('utf8').on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line) this.push(JSON.parse(line));
      }
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve(code ?? signal)));
    this.child.on('exit', (code, signal) => {
      for (const w of this.waiters.splice(0)) w.reject(new Error(`${this.name} exited (${code ?? signal}) while waiting for ${w.what}; log tail:\n${this.logTail.slice(-4000)}`));
    });
  }

  push(e) {
    e.t = BigInt(e.t);
    this.events.push(e);
    this.waiters = this.waiters.filter((w) => {
      if (!w.match(e)) return true;
      clearTimeout(w.timer);
      w.resolve(e);
      return false;
    });
  }

  /** The first event (already seen or to come) after index `from` that matches; rejects after timeoutMs or if the proxy exits. */
  waitFor(what, match, { from = 0, timeoutMs = 600_000 } = {}) {
    const seen = this.events.slice(from).find(match);
    if (seen) return Promise.resolve(seen);
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.reject(new Error(`${this.name} has exited; log tail:\n${this.logTail.slice(-4000)}`));
    return new Promise((resolve, reject) => {
      const w = { what, match, resolve, reject };
      w.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; log tail:\n${this.logTail.slice(-4000)}`));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  /** VmRSS and VmHWM (peak) of the proxy process, in bytes. */
  memory() {
    const st = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(st)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  }

  /**
   * Where the resident set is (/proc/PID/smaps), in bytes: the node binary,
   * the addon, other shared libraries and files, malloc's main heap
   * ([heap]), and anonymous mappings (V8's heap, malloc's thread arenas and
   * large blocks, thread stacks).
   */
  residentByMapping() {
    const out = { node: 0, addon: 0, files: 0, heap: 0, anonymous: 0 };
    let into = 'anonymous';
    for (const line of readFileSync(`/proc/${this.pid}/smaps`, 'utf8').split('\n')) {
      const m = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
      if (m) {
        const file = m[1];
        into = file === '' || file.startsWith('[anon') || file === '[stack]' ? 'anonymous'
          : file === '[heap]' ? 'heap'
          : file.endsWith('.node') ? 'addon'
          : path.basename(file) === 'node' ? 'node'
          : 'files';
        continue;
      }
      const rss = /^Rss:\s+(\d+) kB/.exec(line);
      if (rss) out[into] += Number(rss[1]) * 1024;
    }
    return out;
  }

  /** User and system CPU of the process so far, from /proc (clock ticks of 10 ms). */
  cpu() {
    const f = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return { userUs: Number(fields[11]) * 10_000, systemUs: Number(fields[12]) * 10_000 };
  }

  async metric(name) {
    const text = await (await fetch(`http://${this.metricsAddress}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.split(' ').at(-1));
  }

  /**
   * SIGTERM, and the exit code (the proxy leaves the kernel programmed). A sync or resync under way is let
   * finish first: the proxy gives itself 10 s to stop, and on a loaded machine a resync of 10,000 services
   * takes longer (it then exits 1, which is not what these benchmarks measure).
   */
  async stop() {
    const running = () => this.child.exitCode === null && this.child.signalCode === null;
    const last = this.events.findLast((e) => /^(re)?sync-(begin|end)$/.test(e.ev));
    if (running() && last?.ev.endsWith('-begin')) {
      const end = last.ev.replace('-begin', '-end');
      await this.waitFor(`the ${end.replace('-end', '')} under way to end`, (e) => e.ev === end, { from: this.events.indexOf(last) }).catch(() => undefined);
    }
    if (running()) this.child.kill('SIGTERM');
    return this.exited;
  }
}
