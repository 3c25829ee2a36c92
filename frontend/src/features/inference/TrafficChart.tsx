import { useMemo } from 'react';
import type { TrafficSample } from '../../lib/apiTypes';
import { EChart } from '../../lib/EChart';
import { timePanels } from '../../lib/timePanels';

export interface TrafficChartNames {
  qps: string;
  p95: string;
  ready: string;
  loading: string;
  replicas: string;
}

interface Props {
  /** Oldest first. */
  samples: TrafficSample[];
  names: TrafficChartNames;
  /** Accessible description; the latest numbers are also in the cards above the chart. */
  label: string;
}

/**
 * Load and latency on top (two y axes, as their units differ), replica counts below on their
 * own grid: replicas move in whole steps and on a far smaller scale than QPS, so sharing an
 * axis would flatten them.
 */
export function TrafficChart({ samples, names, label }: Props) {
  const option = useMemo(() => {
    const point = (pick: (s: TrafficSample) => number) =>
      samples.map((s) => [Date.parse(s.at), pick(s)]);
    // One sample is a dot, not a line: show symbols then, and keep the time axis to a
    // couple of minutes around it instead of ECharts' default of a day either side.
    const only = samples.length === 1 ? samples[0] : undefined;
    const single = only !== undefined;
    const at = only ? Date.parse(only.at) : 0;
    return {
      ...timePanels({
        right: 56,
        lowerHeight: 60,
        timeAxis: single ? { min: at - 60_000, max: at + 60_000 } : {},
      }),
      yAxis: [
        {
          type: 'value',
          gridIndex: 0,
          name: names.qps,
          splitLine: { lineStyle: { color: '#eef1f5' } },
        },
        { type: 'value', gridIndex: 0, name: names.p95, splitLine: { show: false } },
        {
          type: 'value',
          gridIndex: 1,
          name: names.replicas,
          nameLocation: 'middle',
          nameGap: 32,
          minInterval: 1,
          splitNumber: 2,
          splitLine: { lineStyle: { color: '#eef1f5' } },
        },
      ],
      series: [
        { name: names.qps, type: 'line', showSymbol: single, data: point((s) => s.qps) },
        {
          name: names.p95,
          type: 'line',
          yAxisIndex: 1,
          showSymbol: single,
          data: point((s) => s.p95_ms),
        },
        ...(
          [
            [names.ready, (s: TrafficSample) => s.ready_replicas],
            [names.loading, (s: TrafficSample) => s.loading_replicas],
          ] as const
        ).map(([name, pick]) => ({
          name,
          type: 'line',
          xAxisIndex: 1,
          yAxisIndex: 2,
          // Stacked, so the top edge is every replica that exists: ready plus still loading.
          stack: 'replicas',
          step: 'end',
          showSymbol: single,
          areaStyle: { opacity: 0.35 },
          data: point(pick),
        })),
      ],
    };
  }, [samples, names]);
  return <EChart option={option} label={label} testId="traffic-chart" height={340} />;
}
