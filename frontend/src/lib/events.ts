/**
 * The one websocket client of the console (`/ws/v1/events/`, see docs/websockets.md).
 *
 * Channel layers deliver at most once, so the stream tracks each topic's `seq`: any number but
 * the next one, or a reconnect after the socket was lost, means events were missed and the
 * caller must refetch over REST (`onResync`). Reconnects back off exponentially with jitter
 * so a restarting server is not hammered by every open tab at once.
 */

export type ConnectionState = 'idle' | 'connecting' | 'open' | 'reconnecting';

export interface ServerEvent {
  type: string;
  topic?: string;
  seq?: number;
  data?: unknown;
  detail?: string;
}

export interface EventStreamOptions {
  url: string;
  onEvent: (event: ServerEvent) => void;
  /** Events on `topic` may have been missed: refetch its snapshot. */
  onResync: (topic: string) => void;
  onStateChange?: (state: ConnectionState) => void;
  /**
   * Whether the stream itself calls `onResync` when a topic's `seq` jumps (default true).
   * Telemetry frames carry `base` and the receiver checks continuity itself (seq may skip).
   */
  sequenceGaps?: boolean;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** 0..1 from Math.random by default; injectable so tests are deterministic. */
  random?: () => number;
}

/** Milliseconds to wait before reconnect attempt `attempt` (0-based): doubling, capped, +-20%. */
export function backoffDelay(attempt: number, base: number, max: number, random: number): number {
  const plain = Math.min(max, base * 2 ** attempt);
  return Math.round(plain * (0.8 + 0.4 * random));
}

export class EventStream {
  private socket: WebSocket | null = null;
  private readonly topics = new Set<string>();
  private readonly lastSeq = new Map<string, number>();
  private attempt = 0;
  private everOpened = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = true;
  private state: ConnectionState = 'idle';

  constructor(private readonly options: EventStreamOptions) {}

  get connectionState(): ConnectionState {
    return this.state;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000);
    this.setState('idle');
  }

  /** Replaces the subscribed topics (e.g. when the user switches tenant). */
  setTopics(topics: string[]): void {
    const wanted = new Set(topics);
    for (const topic of this.topics) {
      if (!wanted.has(topic)) {
        this.topics.delete(topic);
        this.lastSeq.delete(topic);
        this.send({ action: 'unsubscribe', topic });
      }
    }
    for (const topic of wanted) {
      if (!this.topics.has(topic)) {
        this.topics.add(topic);
        this.send({ action: 'subscribe', topic });
      }
    }
  }

  private setState(state: ConnectionState): void {
    if (state === this.state) return;
    this.state = state;
    this.options.onStateChange?.(state);
  }

  private send(message: { action: string; topic: string }): void {
    if (this.socket?.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify(message));
    }
  }

  private connect(): void {
    this.setState(this.everOpened || this.attempt > 0 ? 'reconnecting' : 'connecting');
    let socket: WebSocket;
    try {
      socket = new WebSocket(this.options.url);
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      if (socket !== this.socket) return;
      const reconnected = this.everOpened;
      this.everOpened = true;
      this.attempt = 0;
      this.setState('open');
      for (const topic of this.topics) {
        this.send({ action: 'subscribe', topic });
        // Whatever happened while we were away is lost: start the sequence afresh.
        this.lastSeq.delete(topic);
        if (reconnected) this.options.onResync(topic);
      }
    };
    socket.onmessage = (message: MessageEvent) => {
      if (socket !== this.socket) return;
      let event: ServerEvent;
      try {
        event = JSON.parse(String(message.data)) as ServerEvent;
      } catch {
        return;
      }
      this.receive(event);
    };
    socket.onclose = () => {
      if (socket !== this.socket) return;
      this.socket = null;
      if (!this.stopped) this.scheduleReconnect();
    };
  }

  private receive(event: ServerEvent): void {
    const { topic, seq } = event;
    if (
      this.options.sequenceGaps !== false &&
      topic !== undefined &&
      typeof seq === 'number' &&
      this.topics.has(topic)
    ) {
      const last = this.lastSeq.get(topic);
      this.lastSeq.set(topic, seq);
      // Anything but the next number means events were missed: a jump is a gap, and a number
      // at or below the last one is a counter that restarted (Redis came back empty while
      // this socket stayed open) or a late event. Either way the REST snapshot is the truth.
      if (last !== undefined && seq !== last + 1) {
        this.options.onResync(topic);
      }
    }
    this.options.onEvent(event);
  }

  private scheduleReconnect(): void {
    this.setState('reconnecting');
    const delay = backoffDelay(
      this.attempt,
      this.options.baseDelayMs ?? 1_000,
      this.options.maxDelayMs ?? 30_000,
      (this.options.random ?? Math.random)(),
    );
    this.attempt += 1;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.stopped) this.connect();
    }, delay);
  }
}

/** Absolute websocket URL of a path on this origin (`/ws/v1/...`). */
export function wsUrl(path: string): string {
  const { protocol, host } = window.location;
  return `${protocol === 'https:' ? 'wss:' : 'ws:'}//${host}${path}`;
}

export function eventsUrl(): string {
  return wsUrl('/ws/v1/events/');
}
