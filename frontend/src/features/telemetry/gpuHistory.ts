import { useQuery } from '@tanstack/react-query';
import { api, ApiError, unwrap } from '../../lib/api';
import type { paths } from '../../api/schema';

export type GpuHistory =
  paths['/api/v1/telemetry/gpu-history/']['get']['responses'][200]['content']['application/json'];
export type GpuPoint = GpuHistory['points'][number];

/** The windows offered for one GPU. */
export const GPU_WINDOWS = ['1h', '6h', '24h'] as const;
export type GpuWindow = (typeof GPU_WINDOWS)[number];
export const GPU_WINDOW_SECONDS: Record<GpuWindow, number> = {
  '1h': 3600,
  '6h': 6 * 3600,
  '24h': 24 * 3600,
};

/** How often the chart asks again while it is on screen (the collector's step). */
export const GPU_HISTORY_REFRESH_MS = 10_000;

/**
 * The server's "no per-GPU history here" (503 with a detail): a deployment without
 * Prometheus whose collector runs in another process, or Prometheus not answering. Asking
 * again at once will not change it; the card says why and offers a retry.
 */
export function isHistoryUnavailable(error: unknown): error is ApiError {
  return error instanceof ApiError && error.status === 503;
}

/** One GPU of `node` over the last `window`, refetched every 10 s while shown. */
export function useGpuHistory(node: string, gpu: number, window: GpuWindow) {
  return useQuery({
    queryKey: ['telemetry', 'gpu-history', node, gpu, window],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/telemetry/gpu-history/', {
          params: {
            query: {
              node,
              gpu,
              start: new Date(Date.now() - GPU_WINDOW_SECONDS[window] * 1000).toISOString(),
            },
          },
          signal,
        }),
      ),
    refetchInterval: (query) =>
      isHistoryUnavailable(query.state.error) ? false : GPU_HISTORY_REFRESH_MS,
    // A 4xx or the 503 above is an answer, not a hiccup; anything else gets two more tries.
    retry: (failures, error) =>
      !(error instanceof ApiError && error.status >= 400 && error.status < 500) &&
      !isHistoryUnavailable(error) &&
      failures < 2,
  });
}

/** What a line measures, and so which axis it is drawn against. */
export type GpuUnit = 'percent' | 'watts' | 'celsius';
export type GpuLineKey = 'util' | 'fb_used_pct' | 'sm_active_pct' | 'power_w' | 'temp_c';

export interface GpuLine {
  /** Its label is `telemetry.gpuLine_<key>`. */
  key: GpuLineKey;
  unit: GpuUnit;
  points: [number, number][];
}

const LINES: [GpuLineKey, GpuUnit][] = [
  ['util', 'percent'],
  ['fb_used_pct', 'percent'],
  ['sm_active_pct', 'percent'],
  ['power_w', 'watts'],
  ['temp_c', 'celsius'],
];

/** The five lines of one GPU's chart: the percentages first, then power and temperature. */
export function gpuLines(points: GpuPoint[]): GpuLine[] {
  return LINES.map(([key, unit]) => ({
    key,
    unit,
    points: points.map((p) => [Date.parse(p.ts), p[key]]),
  }));
}

/**
 * Whether to say the source keeps less than the window asked for: the embedded collector
 * (`recent`) keeps `kept_s` seconds; Prometheus (`kept_s` null) as much as it retains.
 */
export function windowBeyondSource(history: GpuHistory | undefined, window: GpuWindow): boolean {
  return (
    history?.source === 'recent' &&
    history.kept_s !== null &&
    GPU_WINDOW_SECONDS[window] > history.kept_s
  );
}

/**
 * The time axis as of the fetch at `at` (ms): the whole window, or only what the source
 * keeps when that is less (a day's axis with an hour of points at its right edge reads as
 * a GPU that was idle for 23 hours).
 */
export function gpuWindowSpan(
  window: GpuWindow,
  keptSeconds: number | null | undefined,
  at: number,
): [number, number] {
  const seconds =
    keptSeconds === null || keptSeconds === undefined
      ? GPU_WINDOW_SECONDS[window]
      : Math.min(GPU_WINDOW_SECONDS[window], keptSeconds);
  return [at - seconds * 1000, at];
}
