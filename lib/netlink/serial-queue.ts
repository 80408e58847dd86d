/**
 * Runs async tasks one after another. A handle's requests share one socket;
 * queueing them here keeps concurrent callers from piling up on the native
 * side (where each waiting call would hold a libuv pool thread).
 */
const noop = (): void => undefined;

export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    // The tail must not hold the result: a dump of 100,000 destinations
    // would stay alive for as long as the handle does.
    this.tail = result.then(noop, noop);
    return result;
  }
}
