import { BarChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useMemo } from 'react';
import { EChart } from '../../lib/EChart';
import type { StackedSeries } from './usageData';

echarts.use([
  BarChart,
  LineChart,
  GridComponent,
  LegendComponent,
  TooltipComponent,
  CanvasRenderer,
]);

interface Props {
  labels: string[];
  series: StackedSeries[];
  cost: number[];
  hoursName: string;
  costName: string;
  label: string;
}

const PALETTE = [
  '#2f6fed',
  '#2ca58d',
  '#f2a900',
  '#9b59b6',
  '#17a2b8',
  '#e8684a',
  '#d6336c',
  '#94a3b8',
  '#6c757d',
];

/** Device-hours per time bucket, stacked by group, with the bucket's cost as a line. */
export function UsageChart({ labels, series, cost, hoursName, costName, label }: Props) {
  const option = useMemo(
    () => ({
      color: PALETTE,
      animation: false,
      grid: { left: 8, right: 8, top: 40, bottom: 8, containLabel: true },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      legend: { type: 'scroll', top: 0 },
      xAxis: { type: 'category', data: labels, axisTick: { alignWithLabel: true } },
      yAxis: [
        { type: 'value', name: hoursName, splitLine: { lineStyle: { color: '#eef1f5' } } },
        { type: 'value', name: costName, splitLine: { show: false } },
      ],
      series: [
        ...series.map((s) => ({
          name: s.name,
          type: 'bar',
          stack: 'hours',
          barMaxWidth: 36,
          data: s.data.map((v) => +v.toFixed(3)),
        })),
        {
          name: costName,
          type: 'line',
          yAxisIndex: 1,
          symbolSize: 5,
          lineStyle: { width: 2, color: '#0f172a' },
          itemStyle: { color: '#0f172a' },
          data: cost.map((v) => +v.toFixed(2)),
        },
      ],
    }),
    [labels, series, cost, hoursName, costName],
  );
  return <EChart option={option} label={label} testId="usage-chart" height={340} />;
}
