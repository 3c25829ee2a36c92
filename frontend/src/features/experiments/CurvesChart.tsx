import { LineChart } from 'echarts/charts';
import {
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  TooltipComponent,
} from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useMemo } from 'react';
import { EChart } from '../../lib/EChart';
import { RUN_COLORS } from './runColors';

echarts.use([
  LineChart,
  GridComponent,
  TooltipComponent,
  LegendComponent,
  DataZoomComponent,
  CanvasRenderer,
]);

export interface CurveLine {
  name: string;
  steps: number[];
  values: number[];
}

interface Props {
  lines: CurveLine[];
  /** Accessible description; the numbers are also in the tables around the chart. */
  label: string;
  testId: string;
  height?: number;
}

/** Metric curves over steps; several lines overlay (one per run) on one step axis. */
export function CurvesChart({ lines, label, testId, height = 260 }: Props) {
  const option = useMemo(
    () => ({
      color: RUN_COLORS,
      animation: false,
      grid: { left: 8, right: 16, top: lines.length > 1 ? 32 : 12, bottom: 36, containLabel: true },
      tooltip: { trigger: 'axis', valueFormatter: (v: unknown) => formatValue(v) },
      legend: { show: lines.length > 1, top: 0, type: 'scroll' },
      xAxis: {
        type: 'value',
        scale: true,
        splitLine: { show: false },
      },
      yAxis: { type: 'value', scale: true, splitLine: { lineStyle: { color: '#eef1f5' } } },
      dataZoom: [{ type: 'inside' }, { type: 'slider', height: 16, bottom: 4 }],
      series: lines.map((line) => ({
        name: line.name,
        type: 'line',
        // A line of one point (a final eval) draws nothing: show it as a dot.
        showSymbol: line.steps.length === 1,
        sampling: 'lttb',
        lineStyle: { width: 1.5 },
        data: line.steps.map((step, i) => [step, line.values[i]]),
      })),
    }),
    [lines],
  );
  return <EChart option={option} label={label} testId={testId} height={height} />;
}

function formatValue(value: unknown): string {
  if (typeof value !== 'number') return String(value);
  const abs = Math.abs(value);
  return abs !== 0 && (abs < 1e-3 || abs >= 1e6)
    ? value.toExponential(3)
    : String(+value.toPrecision(5));
}
