import type { TelemetryFrame } from '../../lib/apiTypes';

export interface HeatmapData {
  nodes: string[];
  gpus: number;
  cells: [number, number, number][];
  max: number;
}

/** Turns a keyframe's `host:index` cells into heatmap rows (nodes) and columns (GPU index). */
export function toHeatmap(frame: TelemetryFrame, field: string): HeatmapData {
  const column = frame.data.fields.indexOf(field);
  const nodes = new Map<string, number>();
  const parsed: [string, number, number][] = [];
  let gpus = 0;
  let max = 0;
  for (const [key, values] of Object.entries(frame.data.cells)) {
    const split = key.lastIndexOf(':');
    const host = key.slice(0, split);
    const index = Number(key.slice(split + 1));
    const value = values[column] ?? 0;
    parsed.push([host, index, value]);
    gpus = Math.max(gpus, index + 1);
    max = Math.max(max, value);
  }
  const sortedHosts = [...new Set(parsed.map((p) => p[0]))].sort();
  sortedHosts.forEach((h, i) => nodes.set(h, i));
  return {
    nodes: sortedHosts,
    gpus,
    cells: parsed.map(([h, i, v]) => [i, nodes.get(h) ?? 0, v]),
    max,
  };
}
