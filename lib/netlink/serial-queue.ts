/**
 * Runs async tasks one after another. A handle's requests share one socket;
 * queueing them here keeps concurrent callers from piling up on the native
 * side (where each waiting call would hold a libuv pool thread).
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
