/**
 * Browser side of `npm run bench:heatmap` (bench/heatmap.bench.mjs drives it in Chromium).
 *
 * Mounts the real GpuHeatmap on a HeatmapStore, loads a keyframe of N GPUs, then feeds
 * deltas the way the telemetry socket does (JSON text -> parse -> store.apply -> the
 * component's next animation frame paints the changed cells) and times each step.
 */
import { createRoot } from 'react-dom/client';
import { GpuHeatmap } from '../features/cluster/GpuHeatmap';
import { FIELDS, type Field } from '../features/cluster/heatmapData';
import { HeatmapStore } from '../features/cluster/heatmapStore';
import type { TelemetryFrame } from '../lib/apiTypes';

export interface BenchCase {
  gpus: number;
  /** Share of cells changed per update (0..1). */
  changed: number;
  updates: number;
  /** Leave the heatmap on the page afterwards (for a screenshot). */
  keep?: boolean;
}

export interface UpdateSample {
  parseMs: number;
  applyMs: number;
  paintMs: number;
  cellsPainted: number;
}

export interface BenchResult {
  gpus: number;
  firstPaintMs: number;
  samples: UpdateSample[];
  /** rAF-to-rAF intervals while the updates ran. */
  frameIntervals: number[];
  canvas: { width: number; height: number };
}

declare global {
  interface Window {
    runHeatmapBench: (spec: BenchCase) => Promise<BenchResult>;
    runEchartsBaseline: (spec: BenchCase) => Promise<number[]>;
  }
}

const GPUS_PER_NODE = 8;
const LABELS = Object.fromEntries(FIELDS.map((f) => [f, f])) as Record<Field, string>;

/** Deterministic pseudo-random numbers (mulberry32), so every run feeds the same values. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hostName(node: number): string {
  return `su${Math.floor(node / 32)}-node-${node}`;
}

function cell(next: () => number): number[] {
  const util = Math.round(next() * 100);
  const power = 60 + Math.round(util * 3.4);
  return [util, Math.round(next() * 81_920), Math.round(28 + 0.12 * power), power, util];
}

function frame(seq: number, base: number, cells: Record<string, number[]>): TelemetryFrame {
  return {
    type: 'telemetry.frame',
    topic: 'heatmap',
    epoch: 'bench',
    seq,
    base,
    at: seq,
    data: { fields: [...FIELDS], cells, removed: [], summary: {} },
  };
}

function keys(gpus: number): string[] {
  return Array.from(
    { length: gpus },
    (_, i) => `${hostName(Math.floor(i / GPUS_PER_NODE))}:${i % GPUS_PER_NODE}`,
  );
}

const nextFrame = () =>
  new Promise<number>((resolve) => {
    requestAnimationFrame(resolve);
  });

window.runHeatmapBench = async ({
  gpus,
  changed,
  updates,
  keep = false,
}: BenchCase): Promise<BenchResult> => {
  const next = random(gpus + Math.round(changed * 1000));
  const all = keys(gpus);
  const store = new HeatmapStore();
  store.apply(frame(1, 0, Object.fromEntries(all.map((k) => [k, cell(next)]))));
  // What the socket would deliver: JSON text, prepared up front so generating it is not timed.
  const texts = Array.from({ length: updates }, (_, u) => {
    const cells: Record<string, number[]> = {};
    for (const key of all) if (changed >= 1 || next() < changed) cells[key] = cell(next);
    return JSON.stringify(frame(u + 2, u + 1, cells));
  });

  let onPainted: ((sample: { ms: number; cells: number }) => void) | null = null;
  const painted = () =>
    new Promise<{ ms: number; cells: number }>((resolve) => {
      onPainted = resolve;
    });
  const onPaint = (ms: number, cells: number) => {
    const done = onPainted;
    onPainted = null;
    done?.({ ms, cells });
  };

  const host = document.getElementById('root');
  if (host === null) throw new Error('no #root');
  const root = createRoot(host);
  const first = painted();
  const mounted = performance.now();
  root.render(
    <GpuHeatmap
      store={store}
      field="util"
      label="bench"
      fieldLabels={LABELS}
      emptyLabel="empty"
      onPaint={onPaint}
    />,
  );
  // The first paint that draws cells (a zero-width pass before layout draws none).
  for (let p = await first; p.cells === 0; p = await painted()) {
    /* wait for layout */
  }
  const firstPaintMs = performance.now() - mounted;

  const frameIntervals: number[] = [];
  let running = true;
  let last = await nextFrame();
  const recordFrames = (now: number) => {
    frameIntervals.push(now - last);
    last = now;
    if (running) requestAnimationFrame(recordFrames);
  };
  requestAnimationFrame(recordFrames);

  const samples: UpdateSample[] = [];
  for (const text of texts) {
    await nextFrame();
    const paint = painted();
    const t0 = performance.now();
    const parsed = JSON.parse(text) as TelemetryFrame;
    const t1 = performance.now();
    if (store.apply(parsed) !== 'applied') throw new Error(`update ${parsed.seq} was not applied`);
    const t2 = performance.now();
    const p = await paint;
    samples.push({ parseMs: t1 - t0, applyMs: t2 - t1, paintMs: p.ms, cellsPainted: p.cells });
  }
  running = false;
  const canvas = host.querySelector('canvas');
  const result: BenchResult = {
    gpus,
    firstPaintMs,
    samples,
    frameIntervals,
    canvas: { width: canvas?.width ?? 0, height: canvas?.height ?? 0 },
  };
  if (!keep) root.unmount();
  return result;
};

/**
 * Baseline: the ECharts heatmap the cluster page used before (one series rebuilt per update,
 * `setOption(..., { notMerge: true })`), rendered synchronously so the cost is measurable.
 */
window.runEchartsBaseline = async ({ gpus, changed, updates }: BenchCase): Promise<number[]> => {
  const [{ HeatmapChart }, components, echarts, { CanvasRenderer }] = await Promise.all([
    import('echarts/charts'),
    import('echarts/components'),
    import('echarts/core'),
    import('echarts/renderers'),
  ]);
  echarts.use([
    HeatmapChart,
    components.GridComponent,
    components.TooltipComponent,
    components.VisualMapComponent,
    CanvasRenderer,
  ]);
  const next = random(gpus + 7);
  const nodes = Array.from({ length: gpus / GPUS_PER_NODE }, (_, n) => hostName(n));
  const cells: [number, number, number][] = Array.from({ length: gpus }, (_, i) => [
    i % GPUS_PER_NODE,
    Math.floor(i / GPUS_PER_NODE),
    Math.round(next() * 100),
  ]);
  const host = document.getElementById('root');
  if (host === null) throw new Error('no #root');
  const element = document.createElement('div');
  element.style.width = '1368px';
  element.style.height = `${Math.max(200, nodes.length * 22 + 48)}px`;
  host.appendChild(element);
  const chart = echarts.init(element);
  const option = () => ({
    animation: false,
    grid: { left: 8, right: 90, top: 8, bottom: 28, containLabel: true },
    tooltip: { position: 'top' },
    xAxis: {
      type: 'category',
      data: Array.from({ length: GPUS_PER_NODE }, (_, i) => `GPU ${i}`),
      splitArea: { show: true },
    },
    yAxis: { type: 'category', data: nodes, inverse: true, axisLabel: { fontSize: 11 } },
    visualMap: { min: 0, max: 100, calculable: true, orient: 'vertical', right: 0, top: 'center' },
    series: [
      {
        type: 'heatmap',
        data: cells.map((c) => [...c]),
        itemStyle: { borderColor: '#fff', borderWidth: 1 },
      },
    ],
  });
  chart.setOption(option(), { notMerge: true });
  const times: number[] = [];
  for (let u = 0; u < updates; u += 1) {
    for (const c of cells) if (changed >= 1 || next() < changed) c[2] = Math.round(next() * 100);
    await nextFrame();
    const t0 = performance.now();
    chart.setOption(option(), { notMerge: true });
    chart.getZr().refreshImmediately();
    times.push(performance.now() - t0);
  }
  chart.dispose();
  element.remove();
  return times;
};
