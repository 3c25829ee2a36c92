import { useMemo } from 'react';
import { EChart } from '../../lib/EChart';
import { MANY_LINE_COLORS, timePanels } from '../../lib/timePanels';
import type { GpuLine, GpuUnit } from './gpuHistory';

interface Props {
  lines: GpuLine[];
  /** Label of each line, by its key. */
  names: Record<string, string>;
  /** Names of the three axes: percent above, watts and °C below. */
  axisNames: Record<GpuUnit, string>;
  /** Accessible description of the chart. */
  label: string;
  /** The span of the time axis, [start, end] in ms. */
  span: [number, number];
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const FORMAT: Record<GpuUnit, (v: unknown) => string> = {
  percent: (v) => (finite(v) ? `${v.toFixed(1)} %` : '—'),
  watts: (v) => (finite(v) ? `${Math.round(v)} W` : '—'),
  celsius: (v) => (finite(v) ? `${Math.round(v)} °C` : '—'),
};
// The lower panel's two axes: power on the left, temperature on the right.
const Y_AXIS: Record<GpuUnit, number> = { percent: 0, watts: 1, celsius: 2 };

/**
 * One GPU over time, in the two panels of the node's own history: utilization, memory used
 * and SM activity on a 0-100 % axis above; power (W, left) and temperature (°C, right)
 * below, as their scales have nothing in common with a percentage or each other.
 */
export function GpuHistoryChart({ lines, names, axisNames, label, span }: Props) {
  const option = useMemo(() => {
    const lower = { type: 'value', gridIndex: 1, min: 0, splitNumber: 3 };
    return {
      ...timePanels({ right: 56, lowerHeight: 110, timeAxis: { min: span[0], max: span[1] } }),
      color: MANY_LINE_COLORS,
      yAxis: [
        {
          type: 'value',
          gridIndex: 0,
          name: axisNames.percent,
          min: 0,
          max: 100,
          splitLine: { lineStyle: { color: '#eef1f5' } },
        },
        { ...lower, name: axisNames.watts, splitLine: { lineStyle: { color: '#eef1f5' } } },
        // Its grid lines would not match the left axis's: left to the power axis.
        { ...lower, name: axisNames.celsius, position: 'right', splitLine: { show: false } },
      ],
      series: lines.map((l) => ({
        name: names[l.key] ?? l.key,
        type: 'line',
        showSymbol: l.points.length === 1,
        ...(l.unit === 'percent' ? {} : { xAxisIndex: 1 }),
        yAxisIndex: Y_AXIS[l.unit],
        tooltip: { valueFormatter: FORMAT[l.unit] },
        data: l.points,
      })),
    };
  }, [lines, names, axisNames, span]);
  return <EChart option={option} label={label} testId="gpu-history-chart" height={400} />;
}
