/**
 * Structured logs (pino, JSON lines on stderr, as kube-proxy logs to
 * stderr) with klog's -v mapped onto levels.
 */
import { pino, type Logger } from 'pino';

function levelFor(verbosity: number): pino.Level {
  if (verbosity >= 5) return 'trace';
  if (verbosity >= 2) return 'debug';
  return 'info';
}

export function makeLogger(verbosity: number): Logger {
  return pino({ name: 'kube-proxy-ipvs', level: levelFor(verbosity), base: { pid: process.pid } }, pino.destination({ fd: 2, sync: true }));
}
