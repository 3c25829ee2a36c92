import { LineChart } from 'echarts/charts';
import {
  AxisPointerComponent,
  GridComponent,
  LegendComponent,
  TooltipComponent,
} from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

// The parts a two-panel time chart draws with, registered where its users import them.
echarts.use([
  LineChart,
  GridComponent,
  LegendComponent,
  TooltipComponent,
  AxisPointerComponent,
  CanvasRenderer,
]);

export const LINE_COLORS = ['#2f6fed', '#e8684a', '#2ca58d', '#f2a900'];

/** For charts with more lines than LINE_COLORS (a node's nine, a GPU's five); same start. */
export const MANY_LINE_COLORS = [
  ...LINE_COLORS,
  '#8e5cd9',
  '#d94f8a',
  '#00a2c7',
  '#7a8b99',
  '#5b8c00',
];

interface Layout {
  /** Room on the right for a second y axis, in pixels. */
  right: number;
  /** Height of the lower panel, in pixels (the upper one is 170). */
  lowerHeight: number;
  /** Extra settings for both time axes (e.g. min / max). */
  timeAxis?: Record<string, unknown>;
}

/**
 * The frame of a line chart in two panels over one time axis (a main measure above, a
 * smaller-scale one below): legend, a tooltip and axis pointer linked across both panels,
 * the two grids and their time axes. Callers add the y axes and series, panel 0 above and
 * panel 1 below.
 */
export function timePanels({ right, lowerHeight, timeAxis = {} }: Layout) {
  const axis = { type: 'time', splitLine: { show: false }, ...timeAxis };
  return {
    color: LINE_COLORS,
    animation: false,
    legend: { top: 0, type: 'scroll' },
    tooltip: { trigger: 'axis' },
    axisPointer: { link: [{ xAxisIndex: 'all' }] },
    // Fixed margins rather than containLabel, so both grids, and so both time axes, line up.
    grid: [
      { left: 56, right, top: 40, height: 170 },
      { left: 56, right, top: 250, height: lowerHeight },
    ],
    xAxis: [
      { ...axis, gridIndex: 0, axisLabel: { show: false } },
      { ...axis, gridIndex: 1 },
    ],
  };
}
