import { describe, expect, it } from 'vitest';
import type { TelemetryFrame } from '../../lib/apiTypes';
import { HeatmapStore } from './heatmapStore';

const FIELDS = ['util', 'fb_used_mib', 'temp_c', 'power_w', 'sm_pct'];

function frame(
  seq: number,
  base: number,
  cells: Record<string, number[]>,
  removed: string[] = [],
  epoch = 'e1',
): TelemetryFrame {
  return {
    type: 'telemetry.frame',
    topic: 'heatmap',
    epoch,
    seq,
    base,
    at: seq,
    data: { fields: FIELDS, cells, removed, summary: { cluster: { gpus: 3 } } },
  };
}

const KEYFRAME = frame(10, 0, {
  'node-10:0': [10, 1, 40, 100, 5],
  'node-9:1': [90, 2, 70, 300, 80],
  'node-9:0': [55, 3, 60, 200, 50],
});

describe('HeatmapStore', () => {
  it('lays a keyframe out as node blocks in natural host order', () => {
    const store = new HeatmapStore();
    expect(store.apply(KEYFRAME)).toBe('applied');
    expect(store.nodes).toEqual(['node-9', 'node-10']);
    expect(store.gpusPerNode).toBe(2);
    expect(store.gpuCount).toBe(3);
    expect(store.slotOf('node-9:1')).toBe(1);
    expect(store.slotOf('node-10:0')).toBe(2);
    expect(store.keyOf(2)).toBe('node-10:0');
    expect(store.value(1, 0)).toBe(90);
    expect(store.value(2, 2)).toBe(40);
    // node-10 has no GPU 1: an empty slot.
    expect(store.present[3]).toBe(0);
    expect(store.value(3, 0)).toBeNaN();
    expect(store.seq).toBe(10);
    expect(store.summary).toEqual({ cluster: { gpus: 3 } });
  });

  it('applies a delta whose base is its seq, marking only the changed slots dirty', () => {
    const store = new HeatmapStore();
    store.apply(KEYFRAME);
    store.takeDirty();
    const layout = store.layoutVersion;
    expect(store.apply(frame(11, 10, { 'node-9:0': [60, 3, 61, 210, 52] }, ['node-10:0']))).toBe(
      'applied',
    );
    expect(store.value(0, 0)).toBe(60);
    expect(store.present[2]).toBe(0);
    expect(store.gpuCount).toBe(2);
    expect([...store.takeDirty()].sort()).toEqual([0, 2]);
    expect(store.takeDirty()).toHaveLength(0);
    expect(store.layoutVersion).toBe(layout);
    expect(store.seq).toBe(11);
  });

  it('reports a gap when the base is not its seq and refuses deltas until a keyframe', () => {
    const store = new HeatmapStore();
    store.apply(KEYFRAME);
    expect(store.apply(frame(13, 12, { 'node-9:0': [1, 1, 1, 1, 1] }))).toBe('gap');
    expect(store.synced).toBe(false);
    expect(store.value(0, 0)).toBe(55);
    // Even the delta that would have followed is refused now: state is unknown.
    expect(store.apply(frame(11, 10, { 'node-9:0': [2, 2, 2, 2, 2] }))).toBe('gap');
    // A frame at or before the state it holds is old news, not a gap.
    expect(store.apply(frame(10, 9, { 'node-9:0': [2, 2, 2, 2, 2] }))).toBe('stale');
    expect(store.value(0, 0)).toBe(55);
    expect(store.apply(frame(14, 13, { 'node-9:0': [2, 2, 2, 2, 2] }))).toBe('gap');
    expect(store.apply(frame(14, 0, { 'node-9:0': [7, 7, 7, 7, 7] }))).toBe('applied');
    expect(store.synced).toBe(true);
    expect(store.gpuCount).toBe(1);
  });

  it('treats a new epoch as a gap (the collector restarted)', () => {
    const store = new HeatmapStore();
    store.apply(KEYFRAME);
    expect(store.apply(frame(11, 10, {}, [], 'e2'))).toBe('gap');
  });

  it('relays out when a delta brings a GPU on a new node', () => {
    const store = new HeatmapStore();
    store.apply(KEYFRAME);
    const layout = store.layoutVersion;
    store.apply(frame(11, 10, { 'node-1:0': [5, 5, 5, 5, 5], 'node-9:0': [6, 6, 6, 6, 6] }));
    expect(store.layoutVersion).toBe(layout + 1);
    expect(store.nodes).toEqual(['node-1', 'node-9', 'node-10']);
    expect(store.gpuCount).toBe(4);
    expect(store.value(store.slotOf('node-1:0'), 0)).toBe(5);
    expect(store.value(store.slotOf('node-9:0'), 0)).toBe(6);
    expect(store.value(store.slotOf('node-9:1'), 0)).toBe(90);
  });

  it('notifies listeners once per applied frame', () => {
    const store = new HeatmapStore();
    let calls = 0;
    const stop = store.subscribe(() => (calls += 1));
    store.apply(KEYFRAME);
    store.apply(frame(12, 11, {}));
    stop();
    store.apply(frame(11, 10, {}));
    expect(calls).toBe(1);
  });
});
