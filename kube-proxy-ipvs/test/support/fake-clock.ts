/**
 * A manual clock for the sync runner and health tests: timers fire only
 * when advance() passes their time, and advance() lets the promises the
 * fired callbacks start settle before moving on.
 */
import type { Clock } from '../../lib/proxy/clock.js';

interface Timer {
  at: number;
  fn: () => void;
  id: number;
}

export class FakeClock implements Clock {
  private t = 1_000_000;
  private timers: Timer[] = [];
  private nextId = 1;

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const timer = { at: this.t + Math.max(0, ms), fn, id: this.nextId++ };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== handle);
  }

  pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by ms, firing due timers in order. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    await settle();
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.t = next.at;
      next.fn();
      await settle();
    }
    this.t = end;
    await settle();
  }
}

/** Lets queued microtasks and immediates run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}
