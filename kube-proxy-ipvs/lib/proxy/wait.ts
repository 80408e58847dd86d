/**
 * A wait that its timer or an end() settles, whichever comes first: the
 * start's wait for its Node (kube-proxy's NodeManager waits 30 s), ended
 * early by the Node's arrival or by a stop.
 */
import type { Clock } from './clock.js';

export class Wait {
  private settle?: () => void;

  constructor(private readonly clock: Clock) {}

  /** Resolves after `ms`, or at the next end(). */
  for(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = this.clock.setTimeout(() => this.end(), ms);
      this.settle = () => {
        this.clock.clearTimeout(timer);
        this.settle = undefined;
        resolve();
      };
    });
  }

  /** Settles the wait under way, if any. */
  end(): void {
    this.settle?.();
  }
}
