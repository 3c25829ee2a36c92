import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TelemetryFrame } from '../../lib/apiTypes';
import { FakeWebSocket } from '../../test/fakeWebSocket';
import { HeatmapStore } from './heatmapStore';
import { TelemetryFeed } from './telemetryFeed';

function frame(seq: number, base: number, util: number, epoch = 'e1'): TelemetryFrame {
  return {
    type: 'telemetry.frame',
    topic: 'heatmap',
    epoch,
    seq,
    base,
    at: seq,
    data: {
      fields: ['util', 'fb_used_mib', 'temp_c', 'power_w', 'sm_pct'],
      cells: { 'gpu-0:0': [util, 0, 0, 0, 0] },
      removed: [],
      summary: {},
    },
  };
}

/** A snapshot request the test answers by hand. */
function pendingSnapshots() {
  const resolvers: ((frame: TelemetryFrame) => void)[] = [];
  const fetchSnapshot = vi.fn(
    () =>
      new Promise<TelemetryFrame>((resolve) => {
        resolvers.push(resolve);
      }),
  );
  return { fetchSnapshot, answer: (f: TelemetryFrame) => resolvers.shift()?.(f) };
}

describe('TelemetryFeed', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function setup() {
    const store = new HeatmapStore();
    const snapshots = pendingSnapshots();
    const feed = new TelemetryFeed({
      topic: 'heatmap',
      store,
      fetchSnapshot: snapshots.fetchSnapshot,
      url: 'ws://x/ws/v1/telemetry/',
    });
    feed.start();
    const socket = FakeWebSocket.latest();
    socket.open();
    return { store, feed, socket, ...snapshots };
  }

  it('subscribes to its topic on the telemetry socket and applies contiguous deltas', () => {
    const { store, socket, fetchSnapshot } = setup();
    expect(socket.url).toBe('ws://x/ws/v1/telemetry/');
    expect(socket.sent).toEqual([{ action: 'subscribe', topic: 'heatmap' }]);
    socket.receive({ type: 'subscribed', topic: 'heatmap' });
    socket.receive(frame(5, 0, 10));
    // seq may jump (merged frames for a slow socket): base is what must match.
    socket.receive(frame(8, 5, 20));
    socket.receive({ ...frame(9, 8, 99), topic: 'heatmap:other' });
    expect(store.seq).toBe(8);
    expect(store.value(0, 0)).toBe(20);
    expect(fetchSnapshot).not.toHaveBeenCalled();
  });

  it('fetches the snapshot on a gap, buffers frames meanwhile and replays them on top', async () => {
    const { store, socket, fetchSnapshot, answer } = setup();
    socket.receive(frame(5, 0, 10));
    socket.receive(frame(7, 6, 30)); // frame 6 was lost
    expect(fetchSnapshot).toHaveBeenCalledTimes(1);
    expect(store.value(0, 0)).toBe(10);
    socket.receive(frame(8, 7, 40));
    socket.receive(frame(9, 8, 50));
    socket.receive(frame(10, 9, 60)); // a second gap while waiting asks nothing more
    expect(fetchSnapshot).toHaveBeenCalledTimes(1);
    answer(frame(8, 0, 45));
    await vi.runAllTimersAsync();
    // The snapshot is at 8; the buffered 9 and 10 follow it, the older 8 is skipped.
    expect(store.seq).toBe(10);
    expect(store.value(0, 0)).toBe(60);
    expect(store.synced).toBe(true);
    socket.receive(frame(11, 10, 70));
    expect(store.value(0, 0)).toBe(70);
    expect(fetchSnapshot).toHaveBeenCalledTimes(1);
  });

  it('resyncs after a reconnect and on a new epoch', async () => {
    const { store, socket, fetchSnapshot, answer } = setup();
    socket.receive(frame(5, 0, 10));
    socket.drop();
    await vi.advanceTimersByTimeAsync(1_200);
    const again = FakeWebSocket.latest();
    expect(again).not.toBe(socket);
    again.open();
    expect(again.sent).toEqual([{ action: 'subscribe', topic: 'heatmap' }]);
    expect(fetchSnapshot).toHaveBeenCalledTimes(1);
    answer(frame(20, 0, 33));
    await vi.runAllTimersAsync();
    expect(store.seq).toBe(20);
    again.receive(frame(2, 1, 5, 'e2'));
    expect(fetchSnapshot).toHaveBeenCalledTimes(2);
  });

  it('asks again at the next gap when a snapshot fetch fails', async () => {
    const store = new HeatmapStore();
    const fetchSnapshot = vi.fn(() => Promise.reject(new Error('offline')));
    const feed = new TelemetryFeed({ topic: 'heatmap', store, fetchSnapshot, url: 'ws://x/' });
    feed.receive(frame(3, 2, 1));
    await vi.runAllTimersAsync();
    expect(feed.resyncing).toBe(false);
    feed.receive(frame(4, 3, 1));
    expect(fetchSnapshot).toHaveBeenCalledTimes(2);
  });

  it('ignores a snapshot older than what a streamed keyframe already brought', () => {
    const { store, feed, socket } = setup();
    socket.receive(frame(9, 0, 90));
    feed.loadSnapshot(frame(7, 0, 70));
    expect(store.seq).toBe(9);
    expect(store.value(0, 0)).toBe(90);
  });
});
