import { useMemo } from 'react';
import { EChart } from '../../lib/EChart';
import { MANY_LINE_COLORS, timePanels } from '../../lib/timePanels';
import { formatRate, type Panels } from './history';

interface Props {
  panels: Panels;
  /** Label of each line, by its key. */
  names: Record<string, string>;
  upperName: string;
  lowerName: string;
  /** Accessible description of the chart. */
  label: string;
  /** The span of the time axis, [start, end] in ms. */
  span: [number, number];
}

const number = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const percent = (v: unknown) => (number(v) ? `${v.toFixed(1)} %` : '—');
const count = (v: unknown) => (number(v) ? String(Math.round(v)) : '—');
const rate = (v: unknown) => (number(v) ? formatRate(v) : '—');

/**
 * Percentages above, counts or byte rates below, over one time axis: their scales differ
 * too much to share an axis. A point without a value (null) is a gap in its line.
 */
export function HistoryChart({ panels, names, upperName, lowerName, label, span }: Props) {
  const option = useMemo(() => {
    const bytes = panels.lowerUnit === 'bytes';
    const series = (lines: Panels['upper'], lower: boolean) =>
      lines.map((l) => ({
        name: names[l.key] ?? l.key,
        type: 'line',
        showSymbol: l.points.length === 1,
        ...(lower ? { xAxisIndex: 1, yAxisIndex: 1 } : {}),
        ...(lower && !bytes ? { step: 'end' } : {}),
        tooltip: { valueFormatter: lower ? (bytes ? rate : count) : percent },
        data: l.points,
      }));
    return {
      ...timePanels({ right: 24, lowerHeight: 110, timeAxis: { min: span[0], max: span[1] } }),
      // A node draws up to nine lines across both panels.
      color: MANY_LINE_COLORS,
      yAxis: [
        {
          type: 'value',
          gridIndex: 0,
          name: upperName,
          min: 0,
          max: 100,
          splitLine: { lineStyle: { color: '#eef1f5' } },
        },
        {
          type: 'value',
          gridIndex: 1,
          name: lowerName,
          min: 0,
          ...(bytes ? { axisLabel: { formatter: formatRate } } : { minInterval: 1 }),
          splitNumber: 3,
          splitLine: { lineStyle: { color: '#eef1f5' } },
        },
      ],
      series: [...series(panels.upper, false), ...series(panels.lower, true)],
    };
  }, [panels, names, upperName, lowerName, span]);
  return <EChart option={option} label={label} testId="history-chart" height={400} />;
}
