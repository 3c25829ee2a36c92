import { BarChart } from 'echarts/charts';
import { GridComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import { useMemo } from 'react';
import type { GpuModelCount } from '../../lib/apiTypes';
import { EChart } from '../../lib/EChart';

// Only what this chart uses: keeps echarts to a fraction of its full size.
echarts.use([BarChart, GridComponent, TooltipComponent, SVGRenderer]);

interface Props {
  rows: GpuModelCount[];
  /** Accessible description of the chart (the table beside it carries the exact numbers). */
  label: string;
  seriesName: string;
}

/** Horizontal bars: GPU count per model, largest first. */
export function GpuModelChart({ rows, label, seriesName }: Props) {
  const option = useMemo(() => {
    const sorted = [...rows].sort((a, b) => a.count - b.count); // echarts draws bottom-up
    return {
      grid: { left: 8, right: 40, top: 8, bottom: 8, containLabel: true },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      xAxis: { type: 'value', minInterval: 1, splitLine: { lineStyle: { color: '#eef1f5' } } },
      yAxis: {
        type: 'category',
        data: sorted.map((row) => row.model),
        axisTick: { show: false },
        axisLine: { lineStyle: { color: '#d0d7e2' } },
        axisLabel: { color: '#334155' },
      },
      series: [
        {
          name: seriesName,
          type: 'bar',
          data: sorted.map((row) => row.count),
          barMaxWidth: 22,
          itemStyle: { color: '#2f6fed', borderRadius: [0, 4, 4, 0] },
          label: { show: true, position: 'right', color: '#475569' },
        },
      ],
    };
  }, [rows, seriesName]);
  const height = Math.max(160, rows.length * 44 + 24);
  return (
    <EChart option={option} label={label} testId="gpu-model-chart" height={height} renderer="svg" />
  );
}
