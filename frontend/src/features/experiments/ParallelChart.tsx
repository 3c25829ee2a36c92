import { ParallelChart as ParallelSeries } from 'echarts/charts';
import { ParallelComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useMemo } from 'react';
import { EChart } from '../../lib/EChart';
import { RUN_COLORS } from './runColors';

echarts.use([ParallelSeries, ParallelComponent, TooltipComponent, CanvasRenderer]);

export interface ParallelAxis {
  name: string;
  /** Numeric axes scale to their values; others list their distinct values as categories. */
  numeric: boolean;
}

interface Props {
  axes: ParallelAxis[];
  /** One line per run: its name and a value per axis (null where the run lacks it). */
  rows: { name: string; values: (string | number | null)[] }[];
  label: string;
}

/** Parallel coordinates over hyperparameters and a final metric, one line per run. */
export function ParallelChart({ axes, rows, label }: Props) {
  const option = useMemo(() => {
    const parallelAxis = axes.map((axis, dim) => {
      if (axis.numeric) return { dim, name: axis.name, type: 'value', scale: true };
      const categories = [...new Set(rows.map((r) => String(r.values[dim] ?? '—')))];
      return { dim, name: axis.name, type: 'category', data: categories };
    });
    return {
      animation: false,
      tooltip: { trigger: 'item', formatter: (p: { seriesName?: string }) => p.seriesName ?? '' },
      parallel: { left: 48, right: 80, top: 48, bottom: 24 },
      parallelAxis,
      series: rows.map((row, i) => ({
        name: row.name,
        type: 'parallel',
        lineStyle: { width: 2, opacity: 0.85, color: RUN_COLORS[i % RUN_COLORS.length] },
        data: [row.values.map((v, dim) => (axes[dim]?.numeric ? v : String(v ?? '—')))],
      })),
    };
  }, [axes, rows]);
  return <EChart option={option} label={label} testId="parallel-chart" height={320} />;
}
