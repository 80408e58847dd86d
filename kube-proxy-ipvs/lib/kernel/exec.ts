/**
 * Runs a program in the controller's network namespace: directly when the
 * controller works in its own, under `nsenter --net=PATH` otherwise. No
 * shell (execFile), input on stdin. Resolves with the exit code and output
 * instead of throwing, since callers decide what an exit status means
 * (`iptables -C` exits 1 for "no such rule").
 */
import { execFile } from 'node:child_process';

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export type Exec = (file: string, args: readonly string[], input?: string) => Promise<ExecResult>;

export function execIn(netns: string | undefined): Exec {
  return (file, args, input) => {
    const [cmd, argv] = netns === undefined ? [file, [...args]] : ['nsenter', [`--net=${netns}`, '--', file, ...args]];
    return new Promise((resolve) => {
      const child = execFile(cmd, argv, { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 127) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr || (err && code === 127 ? err.message : '')) });
      });
      child.stdin?.on('error', () => undefined); // a program that exits early closes its stdin
      child.stdin?.end(input ?? '');
    });
  };
}

/** An Exec result that failed, as an Error naming the command. */
export function execError(file: string, args: readonly string[], r: ExecResult): Error {
  return new Error(`${file} ${args.join(' ')} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
}
