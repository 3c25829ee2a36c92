import { HeatmapChart } from 'echarts/charts';
import { GridComponent, TooltipComponent, VisualMapComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';

// Canvas: a cluster has thousands of cells; SVG would create one DOM node per GPU.
echarts.use([HeatmapChart, GridComponent, TooltipComponent, VisualMapComponent, CanvasRenderer]);

interface Props {
  nodes: string[];
  gpus: number;
  /** [gpu index, node index, value] */
  cells: [number, number, number][];
  max: number;
  label: string;
  seriesName: string;
}

/** One row per node, one column per GPU index, colour = the chosen metric. */
export function GpuHeatmap({ nodes, gpus, cells, max, label, seriesName }: Props) {
  const container = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);

  useEffect(() => {
    const element = container.current;
    if (element === null) return undefined;
    const instance = echarts.init(element);
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
  }, []);

  useEffect(() => {
    chart.current?.setOption(
      {
        animation: false,
        grid: { left: 8, right: 90, top: 8, bottom: 28, containLabel: true },
        tooltip: { position: 'top' },
        xAxis: {
          type: 'category',
          data: Array.from({ length: gpus }, (_, i) => `GPU ${i}`),
          splitArea: { show: true },
        },
        yAxis: { type: 'category', data: nodes, inverse: true, axisLabel: { fontSize: 11 } },
        visualMap: {
          min: 0,
          max,
          calculable: true,
          orient: 'vertical',
          right: 0,
          top: 'center',
          inRange: { color: ['#eef3fb', '#9ec5fe', '#2f6fed', '#f59e0b', '#dc2626'] },
        },
        series: [
          {
            name: seriesName,
            type: 'heatmap',
            data: cells,
            itemStyle: { borderColor: '#fff', borderWidth: 1 },
            emphasis: { itemStyle: { borderColor: '#111', borderWidth: 1 } },
          },
        ],
      },
      { notMerge: true },
    );
  }, [nodes, gpus, cells, max, seriesName]);

  const height = Math.max(200, nodes.length * 22 + 48);
  return (
    <div
      ref={container}
      role="img"
      aria-label={label}
      data-testid="gpu-heatmap"
      style={{ width: '100%', height }}
    />
  );
}
