import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../lib/api';
import type { HistoryPoint } from '../../lib/apiTypes';

/** The ranges offered, each at the rollup resolution the server keeps long enough for it. */
export const RANGES = ['1h', '24h', '7d'] as const;
export type HistoryRange = (typeof RANGES)[number];
const RANGE: Record<HistoryRange, { seconds: number; resolution: 10 | 60 | 600 }> = {
  '1h': { seconds: 3600, resolution: 10 },
  '24h': { seconds: 86_400, resolution: 60 },
  '7d': { seconds: 7 * 86_400, resolution: 600 },
};

/**
 * The time span the chart shows for `range` as of `at` (ms): the whole range, so a series
 * that began minutes ago (one point) is drawn at the right edge of the last hour, not
 * centred on an axis the chart library stretched to two days around it.
 */
export function rangeWindow(range: HistoryRange, at: number): [number, number] {
  return [at - RANGE[range].seconds * 1000, at];
}

/**
 * One series of the collector's rollups (`cluster`, `pool:<id>`, `tenant:<slug>`,
 * `node:<name>`, `job:<id>`) over the last `range`, refetched as often as a new bucket
 * closes at that resolution.
 */
export function useHistory(series: string, range: HistoryRange) {
  const { seconds, resolution } = RANGE[range];
  return useQuery({
    queryKey: ['telemetry', 'history', series, range],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/telemetry/history/', {
          params: {
            query: {
              series,
              resolution,
              start: new Date(Date.now() - seconds * 1000).toISOString(),
            },
          },
          signal,
        }),
      ),
    refetchInterval: resolution * 1000,
  });
}

/** A line of the chart: a stable key (its label is `telemetry.line_<key>`) and its points. */
export interface Line {
  key: LineKey;
  points: [number, number | null][];
}

export interface Panels {
  /** Percentages (0-100). */
  upper: Line[];
  /** GPUs (counts), or bytes per second for a node. */
  lower: Line[];
  lowerUnit: 'gpus' | 'bytes';
}

export type SeriesKind = 'cluster' | 'pool' | 'tenant' | 'job' | 'node';

const NODE_PERCENT = [
  ['cpu', 'cpu_pct'],
  ['mem', 'mem_used_pct'],
] as const;
const NODE_RATES = [
  ['net_rx', 'net_rx_bps'],
  ['net_tx', 'net_tx_bps'],
  ['ib_rx', 'ib_rx_bps'],
  ['ib_tx', 'ib_tx_bps'],
  ['disk_read', 'disk_read_bps'],
  ['disk_write', 'disk_write_bps'],
] as const;

export type LineKey =
  | 'util'
  | 'allocated'
  | 'total'
  | 'held'
  | (typeof NODE_PERCENT)[number][0]
  | (typeof NODE_RATES)[number][0];

function extra(point: HistoryPoint, name: string): number | null {
  const value = point.extra[name];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * What each kind of series draws. GPU series: mean utilization above; below, the GPUs
 * allocated against all of them (cluster, pool) or the GPUs held (tenant, job). A node:
 * GPU, CPU and memory use above, its network, InfiniBand and disk traffic below; a rate
 * no point carries (a node without IB) is left out rather than drawn as zero.
 */
export function historyPanels(points: HistoryPoint[], kind: SeriesKind): Panels {
  const line = (key: LineKey, pick: (p: HistoryPoint) => number | null): Line => ({
    key,
    points: points.map((p) => [Date.parse(p.ts), pick(p)]),
  });
  const util = line('util', (p) => p.util);
  if (kind === 'node') {
    const present = (name: string) => points.some((p) => extra(p, name) !== null);
    return {
      upper: [
        util,
        ...NODE_PERCENT.filter(([, n]) => present(n)).map(([k, n]) => line(k, (p) => extra(p, n))),
      ],
      lower: NODE_RATES.filter(([, n]) => present(n)).map(([k, n]) => line(k, (p) => extra(p, n))),
      lowerUnit: 'bytes',
    };
  }
  if (kind === 'cluster' || kind === 'pool') {
    // Points written before the collector kept allocated GPUs have none: a gap, not a 0.
    return {
      upper: [util],
      lower: [line('allocated', (p) => extra(p, 'busy')), line('total', (p) => p.gpus)],
      lowerUnit: 'gpus',
    };
  }
  return { upper: [util], lower: [line('held', (p) => p.gpus)], lowerUnit: 'gpus' };
}

/** `node:<name>` -> 'node', `cluster` -> 'cluster'. */
export function kindOf(series: string): SeriesKind {
  return series.split(':', 1)[0] as SeriesKind;
}

const RATE_UNITS = ['B/s', 'KB/s', 'MB/s', 'GB/s', 'TB/s'];

/** Bytes per second in the largest decimal unit that keeps the number at or above 1. */
export function formatRate(bytesPerSecond: number): string {
  let value = Math.abs(bytesPerSecond);
  let unit = 0;
  while (value >= 1000 && unit < RATE_UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const sign = bytesPerSecond < 0 ? '-' : '';
  return `${sign}${value >= 100 || unit === 0 ? Math.round(value) : value.toFixed(1)} ${RATE_UNITS[unit]}`;
}
