/** A Source fed from memory: the initial events at start, then whatever a test emits, replays or resyncs. */
import type { Source, SourceEvent, SourceHandlers } from '../../lib/proxy/sources/source.js';

export class MemorySource implements Source {
  readonly description = 'memory';
  private handlers?: SourceHandlers;

  constructor(private readonly initial: SourceEvent[]) {}

  async start(handlers: SourceHandlers): Promise<void> {
    this.handlers = handlers;
    for (const e of this.initial) handlers.event(e);
    handlers.synced();
  }

  async stop(): Promise<void> {}

  emit(...events: SourceEvent[]): void {
    for (const e of events) this.handlers!.event(e);
  }

  replay(...events: SourceEvent[]): void {
    for (const e of events) this.handlers!.replayed!(e);
  }

  resync(): void {
    this.handlers!.resync!();
  }
}
