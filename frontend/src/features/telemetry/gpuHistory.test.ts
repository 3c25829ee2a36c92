import { describe, expect, it } from 'vitest';
import { gpuLines, gpuWindowSpan, windowBeyondSource, type GpuHistory } from './gpuHistory';

const POINT = {
  ts: '2026-12-03T10:00:00Z',
  util: 50,
  fb_used_pct: 25,
  sm_active_pct: 40,
  power_w: 210,
  temp_c: 61,
};

function history(source: GpuHistory['source'], keptS: number | null): GpuHistory {
  return { node: 'n', gpu: 0, source, resolution_s: 10, kept_s: keptS, points: [POINT] };
}

describe('GPU history', () => {
  it('draws percentages first, then power and temperature, each on its axis', () => {
    const lines = gpuLines([POINT, { ...POINT, ts: '2026-12-03T10:00:10Z', util: 70 }]);
    expect(lines.map((l) => [l.key, l.unit, l.points.map((p) => p[1])])).toEqual([
      ['util', 'percent', [50, 70]],
      ['fb_used_pct', 'percent', [25, 25]],
      ['sm_active_pct', 'percent', [40, 40]],
      ['power_w', 'watts', [210, 210]],
      ['temp_c', 'celsius', [61, 61]],
    ]);
    expect(lines[0]?.points[1]?.[0]).toBe(Date.parse('2026-12-03T10:00:10Z'));
  });

  it('notes a window longer than the embedded collector keeps, never for Prometheus', () => {
    expect(windowBeyondSource(history('recent', 3600), '1h')).toBe(false);
    expect(windowBeyondSource(history('recent', 3600), '6h')).toBe(true);
    expect(windowBeyondSource(history('recent', 3600), '24h')).toBe(true);
    expect(windowBeyondSource(history('prometheus', null), '24h')).toBe(false);
    expect(windowBeyondSource(undefined, '24h')).toBe(false);
  });

  it('spans the window, or only what the source keeps', () => {
    const at = Date.UTC(2026, 11, 4, 16, 0, 0);
    expect(gpuWindowSpan('6h', null, at)).toEqual([at - 6 * 3_600_000, at]);
    expect(gpuWindowSpan('6h', 3600, at)).toEqual([at - 3_600_000, at]);
    expect(gpuWindowSpan('1h', 7200, at)).toEqual([at - 3_600_000, at]);
  });
});
