import { describe, expect, it } from 'vitest';
import type { HistoryPoint } from '../../lib/apiTypes';
import { formatRate, historyPanels, kindOf, rangeWindow } from './history';

function point(minute: number, fields: Partial<HistoryPoint> = {}): HistoryPoint {
  return {
    ts: `2026-12-03T10:0${minute}:00Z`,
    gpus: 16,
    util: 50,
    fb_used_mib: 0,
    power_w: 0,
    temp_max_c: 0,
    extra: {},
    ...fields,
  };
}

const values = (line: { points: [number, number | null][] }) => line.points.map((p) => p[1]);

describe('telemetry history', () => {
  it('draws a cluster as utilization above, allocated against all GPUs below', () => {
    const panels = historyPanels(
      [point(0, { util: 40, extra: {} }), point(1, { util: 60, extra: { busy: 12.5 } })],
      'cluster',
    );
    expect(panels.upper.map((l) => [l.key, values(l)])).toEqual([['util', [40, 60]]]);
    expect(panels.upper.map((l) => l.points[1]?.[0])).toEqual([Date.parse('2026-12-03T10:01:00Z')]);
    // A point written before allocated GPUs were kept is a gap, not zero.
    expect(panels.lower.map((l) => [l.key, values(l)])).toEqual([
      ['allocated', [null, 12.5]],
      ['total', [16, 16]],
    ]);
    expect(panels.lowerUnit).toBe('gpus');
  });

  it("draws a job's or tenant's GPUs held, not the cluster's total", () => {
    for (const kind of ['job', 'tenant'] as const) {
      const panels = historyPanels([point(0, { gpus: 8 })], kind);
      expect(panels.lower.map((l) => [l.key, values(l)])).toEqual([['held', [8]]]);
    }
  });

  it('draws a node as use above and traffic below, leaving out rates it never reports', () => {
    const panels = historyPanels(
      [
        point(0, { extra: { cpu_pct: 20, mem_used_pct: 40, net_rx_bps: 1e6, disk_read_bps: 5 } }),
        point(1, { extra: { cpu_pct: 30, mem_used_pct: 41, net_rx_bps: 2e6 } }),
      ],
      'node',
    );
    expect(panels.upper.map((l) => [l.key, values(l)])).toEqual([
      ['util', [50, 50]],
      ['cpu', [20, 30]],
      ['mem', [40, 41]],
    ]);
    // No IB port and no disk writes on this node: no flat zero lines for them.
    expect(panels.lower.map((l) => [l.key, values(l)])).toEqual([
      ['net_rx', [1e6, 2e6]],
      ['disk_read', [5, null]],
    ]);
    expect(panels.lowerUnit).toBe('bytes');
  });

  it('formats byte rates in decimal units and names series kinds', () => {
    expect(formatRate(0)).toBe('0 B/s');
    expect(formatRate(999)).toBe('999 B/s');
    expect(formatRate(1500)).toBe('1.5 KB/s');
    expect(formatRate(250e6)).toBe('250 MB/s');
    expect(formatRate(12.34e9)).toBe('12.3 GB/s');
    expect(formatRate(5e18)).toBe('5000000 TB/s');
    expect(kindOf('node:gpu-001')).toBe('node');
    expect(kindOf('cluster')).toBe('cluster');
    expect(kindOf('tenant:vision')).toBe('tenant');
  });
});

describe('rangeWindow', () => {
  it('spans the whole range up to the fetch, whatever the points cover', () => {
    const at = Date.UTC(2026, 11, 4, 16, 0, 0);
    expect(rangeWindow('1h', at)).toEqual([at - 3_600_000, at]);
    expect(rangeWindow('7d', at)).toEqual([at - 7 * 86_400_000, at]);
  });
});
