import type { CSSProperties } from 'react';

/** What the layout needs of a job: its id and the ids of the jobs it starts after. */
export interface PipelineNode {
  id: number;
  after: readonly number[];
}

export const BOX_WIDTH = 200;
export const BOX_HEIGHT = 64;
export const COLUMN_GAP = 56;
export const ROW_GAP = 16;

export interface PlacedNode {
  id: number;
  /** The longest path (in arrows) from a job that starts after none of the others. */
  column: number;
  /** Its place in its column, from the top. */
  row: number;
  /** The box's top-left corner, in pixels. */
  x: number;
  y: number;
}

/** An arrow from a job to one that starts after it: right edge of one box to left of the next. */
export interface PlacedEdge {
  from: number;
  to: number;
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

export interface PipelineLayout {
  /** In the order given. */
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

/** Each job's predecessors among the jobs given: an `after` outside them is no arrow. */
function predecessorsOf(jobs: readonly PipelineNode[]): Map<number, number[]> {
  const ids = new Set(jobs.map((job) => job.id));
  return new Map(
    jobs.map((job) => [
      job.id,
      [...new Set(job.after)].filter((id) => id !== job.id && ids.has(id)),
    ]),
  );
}

function columnsOf(preds: Map<number, number[]>): Map<number, number> {
  const columns = new Map<number, number>();
  const visiting = new Set<number>();
  const columnOf = (id: number): number => {
    const known = columns.get(id);
    if (known !== undefined) return known;
    // A cycle cannot come from the server (a job starts after older ones); do not loop on one.
    if (visiting.has(id)) return 0;
    visiting.add(id);
    const column = Math.max(0, ...(preds.get(id) ?? []).map((p) => columnOf(p) + 1));
    visiting.delete(id);
    columns.set(id, column);
    return column;
  };
  for (const id of preds.keys()) columnOf(id);
  return columns;
}

/**
 * Lays a pipeline out left to right: a job's column is its longest path from a root, and each
 * column is ordered by the mean height of the jobs it starts after (ties by id), which keeps
 * arrows from crossing in the common shapes. Columns shorter than the tallest are centred.
 */
export function layoutPipeline(jobs: readonly PipelineNode[]): PipelineLayout {
  const preds = predecessorsOf(jobs);
  const columns = columnsOf(preds);
  const byColumn: number[][] = [];
  for (const job of jobs) {
    const column = columns.get(job.id) ?? 0;
    (byColumn[column] ??= []).push(job.id);
  }
  const tallest = byColumn.reduce((most, ids) => Math.max(most, ids.length), 0);
  // A job's height in rows, centring included: what the next column orders by.
  const slots = new Map<number, number>();
  const rows = new Map<number, number>();
  const meanSlot = (id: number): number => {
    // Only earlier columns are placed yet, and every predecessor is in one of them.
    const placed = (preds.get(id) ?? []).flatMap((p) => slots.get(p) ?? []);
    return placed.length === 0 ? 0 : placed.reduce((a, b) => a + b, 0) / placed.length;
  };
  byColumn.forEach((ids) => {
    const keyed = ids.map((id) => ({ id, key: meanSlot(id) }));
    keyed.sort((a, b) => a.key - b.key || a.id - b.id);
    const offset = (tallest - ids.length) / 2;
    keyed.forEach(({ id }, row) => {
      rows.set(id, row);
      slots.set(id, offset + row);
    });
  });

  const nodes: PlacedNode[] = jobs.map((job) => {
    const column = columns.get(job.id) ?? 0;
    return {
      id: job.id,
      column,
      row: rows.get(job.id) ?? 0,
      x: column * (BOX_WIDTH + COLUMN_GAP),
      y: Math.round((slots.get(job.id) ?? 0) * (BOX_HEIGHT + ROW_GAP)),
    };
  });
  const placed = new Map(nodes.map((node) => [node.id, node]));
  const edges: PlacedEdge[] = nodes.flatMap((to) =>
    (preds.get(to.id) ?? []).flatMap((id) => {
      const from = placed.get(id);
      if (from === undefined) return [];
      return [
        {
          from: id,
          to: to.id,
          x1: from.x + BOX_WIDTH,
          y1: from.y + BOX_HEIGHT / 2,
          x2: to.x,
          y2: to.y + BOX_HEIGHT / 2,
        },
      ];
    }),
  );
  const columnCount = byColumn.length;
  return {
    nodes,
    edges,
    width: columnCount === 0 ? 0 : columnCount * BOX_WIDTH + (columnCount - 1) * COLUMN_GAP,
    height: tallest === 0 ? 0 : tallest * BOX_HEIGHT + (tallest - 1) * ROW_GAP,
  };
}

/** How far an arrow that skips columns bows upwards, clear of the boxes it passes. */
const BOW = 56;

/**
 * The SVG path of an arrow: an S-curve to the next column; an arrow that skips columns bows
 * upwards so that it does not run behind the boxes between.
 */
export function edgePath(edge: PlacedEdge): string {
  const { x1, y1, x2, y2 } = edge;
  const bend = (x2 - x1) / 2;
  const lift = x2 - x1 > COLUMN_GAP ? BOW : 0;
  return `M${x1},${y1} C${x1 + bend},${y1 - lift} ${x2 - bend},${y2 - lift} ${x2},${y2}`;
}

/** Where a box sits in the diagram, its size and inner layout (a line at the top, one at the
 * bottom): the rest of its look (border, colours) is its drawer's. */
export function boxFrame(node: PlacedNode): CSSProperties {
  return {
    position: 'absolute',
    left: node.x,
    top: node.y,
    width: BOX_WIDTH,
    height: BOX_HEIGHT,
    boxSizing: 'border-box',
    padding: '6px 10px',
    display: 'flex',
    flexDirection: 'column',
    justifyContent: 'space-between',
  };
}
