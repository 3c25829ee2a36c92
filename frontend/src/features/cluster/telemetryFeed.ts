import type { TelemetryFrame } from '../../lib/apiTypes';
import { EventStream, wsUrl, type ConnectionState, type ServerEvent } from '../../lib/events';
import type { HeatmapStore } from './heatmapStore';

export interface TelemetryFeedOptions {
  topic: string;
  store: HeatmapStore;
  /** Fetches the view's keyframe over REST (`/api/v1/telemetry/snapshot/`): the resync point. */
  fetchSnapshot: () => Promise<TelemetryFrame>;
  onStateChange?: (state: ConnectionState) => void;
  url?: string;
}

/** Frames kept while a snapshot is on its way; at one a second a fetch never needs more. */
const BUFFER_LIMIT = 30;

function isFrame(event: ServerEvent): event is ServerEvent & TelemetryFrame {
  const frame = event as Partial<TelemetryFrame>;
  return (
    event.type === 'telemetry.frame' &&
    typeof frame.seq === 'number' &&
    typeof frame.base === 'number' &&
    typeof frame.epoch === 'string' &&
    typeof frame.data === 'object'
  );
}

/**
 * Streams one telemetry view (`/ws/v1/telemetry/`) into a HeatmapStore.
 *
 * Uses the console's websocket client (EventStream: reconnect with backoff, resubscribe) and
 * applies the telemetry rule from docs/websockets.md: a frame whose `base` is not the store's
 * `seq` (or a new `epoch`, or a reconnect) means state was missed, so the snapshot is fetched;
 * frames that arrive meanwhile are kept and replayed on top of it.
 */
export class TelemetryFeed {
  private readonly stream: EventStream;
  private waiting = false;
  private buffer: TelemetryFrame[] = [];

  constructor(private readonly options: TelemetryFeedOptions) {
    this.stream = new EventStream({
      url: options.url ?? wsUrl('/ws/v1/telemetry/'),
      sequenceGaps: false,
      onEvent: (event) => {
        if (event.topic === options.topic && isFrame(event)) this.receive(event);
      },
      onResync: () => {
        this.resync();
      },
      onStateChange: options.onStateChange,
    });
  }

  /** Whether a snapshot fetch is in flight. */
  get resyncing(): boolean {
    return this.waiting;
  }

  start(): void {
    this.stream.setTopics([this.options.topic]);
    this.stream.start();
  }

  stop(): void {
    this.stream.stop();
  }

  receive(frame: TelemetryFrame): void {
    if (this.waiting && frame.base !== 0) {
      this.buffer.push(frame);
      if (this.buffer.length > BUFFER_LIMIT) this.buffer.shift();
      return;
    }
    if (frame.base === 0) {
      this.loadSnapshot(frame);
      return;
    }
    if (this.options.store.apply(frame) === 'gap') this.resync();
  }

  /** Loads a keyframe (REST snapshot or a streamed one), then replays what was buffered. */
  loadSnapshot(frame: TelemetryFrame): void {
    const { store } = this.options;
    // The same or an older state than the store's (a cached snapshot after a newer keyframe).
    const older = store.synced && frame.epoch === store.epoch && frame.seq <= store.seq;
    if (!older) store.apply({ ...frame, base: 0 });
    this.waiting = false;
    const pending = this.buffer;
    this.buffer = [];
    for (const next of pending) {
      if (next.epoch === store.epoch && next.seq <= store.seq) continue;
      if (store.apply(next) === 'gap') {
        this.resync();
        return;
      }
    }
  }

  /** Fetches a snapshot unless one is already on its way. */
  resync(): void {
    if (this.waiting) return;
    this.waiting = true;
    this.buffer = [];
    this.options.fetchSnapshot().then(
      (frame) => {
        this.loadSnapshot(frame);
      },
      () => {
        // Left to the next frame: it will be a gap again and ask once more.
        this.waiting = false;
        this.buffer = [];
      },
    );
  }
}
