import type { EChartsCoreOption } from 'echarts/core';
import * as echarts from 'echarts/core';
import { useEffect, useRef } from 'react';

/**
 * Mounts an echarts instance on the returned ref and keeps its option in sync. The caller
 * registers the chart parts it uses (`echarts.use`) in its own module, so each page's chunk
 * carries only those parts.
 */
export function useEChart(option: EChartsCoreOption, renderer: 'canvas' | 'svg' = 'canvas') {
  const container = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);

  useEffect(() => {
    const element = container.current;
    if (element === null) return undefined;
    const instance = echarts.init(element, undefined, { renderer });
    chart.current = instance;
    const observer = new ResizeObserver(() => {
      instance.resize();
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      instance.dispose();
      chart.current = null;
    };
  }, [renderer]);

  useEffect(() => {
    chart.current?.setOption(option, { notMerge: true });
  }, [option]);

  return container;
}
