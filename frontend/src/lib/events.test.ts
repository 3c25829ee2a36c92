import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeWebSocket } from '../test/fakeWebSocket';
import { backoffDelay, EventStream, type ConnectionState, type ServerEvent } from './events';

describe('backoffDelay', () => {
  it('doubles per attempt, is capped, and jitters by +-20%', () => {
    expect([0, 1, 2, 3, 10].map((a) => backoffDelay(a, 1000, 30_000, 0.5))).toEqual([
      1000, 2000, 4000, 8000, 30_000,
    ]);
    expect(backoffDelay(0, 1000, 30_000, 0)).toBe(800);
    expect(backoffDelay(0, 1000, 30_000, 1)).toBe(1200);
  });
});

describe('EventStream', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function setup() {
    const events: ServerEvent[] = [];
    const resyncs: string[] = [];
    const states: ConnectionState[] = [];
    const stream = new EventStream({
      url: 'ws://x/ws/v1/events/',
      onEvent: (e) => events.push(e),
      onResync: (t) => resyncs.push(t),
      onStateChange: (s) => states.push(s),
      random: () => 0.5,
    });
    stream.setTopics(['tenant:vision']);
    stream.start();
    return { stream, events, resyncs, states };
  }

  it('subscribes on open and asks for a resync on a sequence gap', () => {
    const { events, resyncs } = setup();
    const socket = FakeWebSocket.latest();
    socket.open();
    expect(socket.sent).toEqual([{ action: 'subscribe', topic: 'tenant:vision' }]);
    socket.receive({ type: 'job.updated', topic: 'tenant:vision', seq: 4, data: {} });
    socket.receive({ type: 'job.updated', topic: 'tenant:vision', seq: 5, data: {} });
    expect(resyncs).toEqual([]);
    socket.receive({ type: 'job.updated', topic: 'tenant:vision', seq: 8, data: {} });
    expect(resyncs).toEqual(['tenant:vision']);
    expect(events.map((e) => e.seq)).toEqual([4, 5, 8]);
  });

  it('asks for a resync when the sequence restarts or repeats on an open socket', () => {
    const { events, resyncs } = setup();
    const socket = FakeWebSocket.latest();
    socket.open();
    socket.receive({ type: 'job.updated', topic: 'tenant:vision', seq: 41, data: {} });
    socket.receive({ type: 'job.updated', topic: 'tenant:vision', seq: 1, data: {} }); // Redis restarted
    expect(resyncs).toEqual(['tenant:vision']);
    socket.receive({ type: 'job.updated', topic: 'tenant:vision', seq: 2, data: {} });
    expect(resyncs).toHaveLength(1); // the new sequence is followed from there
    socket.receive({ type: 'job.updated', topic: 'tenant:vision', seq: 2, data: {} });
    expect(resyncs).toHaveLength(2);
    expect(events.map((e) => e.seq)).toEqual([41, 1, 2, 2]);
  });

  it('reconnects with backoff, resubscribes and resyncs after the socket drops', () => {
    const { states, resyncs, stream } = setup();
    const first = FakeWebSocket.latest();
    first.open();
    first.drop();
    expect(states).toEqual(['connecting', 'open', 'reconnecting']);
    vi.advanceTimersByTime(999);
    expect(FakeWebSocket.instances).toHaveLength(1);
    vi.advanceTimersByTime(1);
    const second = FakeWebSocket.latest();
    expect(FakeWebSocket.instances).toHaveLength(2);
    second.drop(); // fails again: the next wait doubles
    vi.advanceTimersByTime(1999);
    expect(FakeWebSocket.instances).toHaveLength(2);
    vi.advanceTimersByTime(1);
    const third = FakeWebSocket.latest();
    third.open();
    expect(third.sent).toEqual([{ action: 'subscribe', topic: 'tenant:vision' }]);
    expect(resyncs).toEqual(['tenant:vision']);
    expect(states.at(-1)).toBe('open');
    stream.stop();
    expect(states.at(-1)).toBe('idle');
  });

  it('switches topics on a live socket', () => {
    const { stream } = setup();
    const socket = FakeWebSocket.latest();
    socket.open();
    stream.setTopics(['tenant:nlp']);
    expect(socket.sent).toEqual([
      { action: 'subscribe', topic: 'tenant:vision' },
      { action: 'unsubscribe', topic: 'tenant:vision' },
      { action: 'subscribe', topic: 'tenant:nlp' },
    ]);
  });
});
