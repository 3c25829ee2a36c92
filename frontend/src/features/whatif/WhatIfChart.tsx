import { MarkAreaComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { useMemo } from 'react';
import { EChart } from '../../lib/EChart';
import { LINE_COLORS, timePanels } from '../../lib/timePanels';
import type { Band } from './whatIfRows';

echarts.use([MarkAreaComponent]);

export interface SeriesPoint {
  t_h: number;
  allocation: number;
  waiting: number;
}

export interface WhatIfLine {
  name: string;
  points: SeriesPoint[];
  /** What really happened: drawn dashed, so the replays stand out against it. */
  actual?: boolean;
}

export interface WhatIfChartNames {
  allocation: string;
  waiting: string;
  outages: string;
}

const OUTAGE_COLOR = '#d4380d';
// The legend shows the shading as a pale block, so it does not read as one more policy's
// line (the second policy's colour is a red too).
const OUTAGE_LEGEND = 'rgba(212, 56, 13, 0.3)';

interface Props {
  /** The window's start (ISO time); points are hours from it. */
  start: string;
  lines: WhatIfLine[];
  names: WhatIfChartNames;
  label: string;
  /** Times with a node out of service (``outageBands``), shaded on the allocation panel. */
  outages?: Band[];
}

/**
 * GPU allocation (top) and jobs waiting (below) over the replayed window, one line per
 * policy and one for what happened. Two grids on one time axis, as their scales differ.
 * Node outages and maintenance windows shade the upper panel (a legend entry of their own
 * turns them off).
 */
export function WhatIfChart({ start, lines, names, label, outages = [] }: Props) {
  const option = useMemo(() => {
    const t0 = Date.parse(start);
    const at = (p: SeriesPoint) => t0 + p.t_h * 3_600_000;
    // Both series of a line (allocation, waiting) share its colour and its legend entry.
    const style = (l: WhatIfLine, i: number) =>
      l.actual
        ? { color: '#5c6470', lineStyle: { type: 'dashed' as const, width: 2 } }
        : { color: LINE_COLORS[i % LINE_COLORS.length] };
    const panels = timePanels({ right: 24, lowerHeight: 80 });
    return {
      ...panels,
      // A line series draws its legend entry as a line; the shading's entry is a block.
      legend: {
        ...panels.legend,
        data: [
          ...lines.map((l) => l.name),
          ...(outages.length ? [{ name: names.outages, icon: 'rect' }] : []),
        ],
      },
      yAxis: [
        {
          type: 'value',
          gridIndex: 0,
          name: names.allocation,
          min: 0,
          max: 100,
          axisLabel: { formatter: '{value}%' },
          splitLine: { lineStyle: { color: '#eef1f5' } },
        },
        {
          type: 'value',
          gridIndex: 1,
          name: names.waiting,
          minInterval: 1,
          splitNumber: 2,
          splitLine: { lineStyle: { color: '#eef1f5' } },
        },
      ],
      series: [
        ...lines.flatMap((l, i) => [
          {
            name: l.name,
            type: 'line',
            showSymbol: false,
            ...style(l, i),
            data: l.points.map((p) => [at(p), Math.round(p.allocation * 1000) / 10]),
          },
          {
            name: l.name,
            type: 'line',
            xAxisIndex: 1,
            yAxisIndex: 1,
            step: 'end',
            showSymbol: false,
            ...style(l, i),
            data: l.points.map((p) => [at(p), p.waiting]),
          },
        ]),
        ...(outages.length
          ? [
              {
                name: names.outages,
                type: 'line',
                data: [],
                color: OUTAGE_LEGEND,
                markArea: {
                  silent: true,
                  itemStyle: { color: OUTAGE_COLOR, opacity: 0.15 },
                  data: outages.map((b) => [
                    { xAxis: t0 + b.start_h * 3_600_000 },
                    { xAxis: t0 + b.end_h * 3_600_000 },
                  ]),
                },
              },
            ]
          : []),
      ],
    };
  }, [start, lines, names, outages]);
  return <EChart option={option} label={label} testId="whatif-chart" height={360} />;
}
