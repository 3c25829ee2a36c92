/**
 * Where each GPU slot sits on the heatmap canvas, and the reverse (pointer -> slot).
 *
 * Nodes are blocks of their GPUs (up to 8 across, then wrapping) laid out left to right,
 * top to bottom, in host order. The cell size is the largest that keeps the whole cluster
 * within `maxHeight`, so 10,000 GPUs fit on one screen and a small cluster gets big cells with
 * host labels. All numbers are device pixels.
 */

export interface HeatmapLayout {
  /** Cell pitch (the painted square is `cell - cellGap`). */
  cell: number;
  cellGap: number;
  blockCols: number;
  blockRows: number;
  /** Gap between node blocks, both ways. */
  nodeGap: number;
  /** Room above each block for the hostname (0 when cells are too small for labels). */
  labelHeight: number;
  nodesPerRow: number;
  blockWidth: number;
  blockHeight: number;
  width: number;
  height: number;
  nodes: number;
  gpusPerNode: number;
}

const MAX_BLOCK_COLS = 8;
const LABELS_FROM_CELL = 14;

export function computeLayout(
  nodes: number,
  gpusPerNode: number,
  width: number,
  maxHeight: number,
  scale = 1,
): HeatmapLayout {
  const blockCols = Math.max(1, Math.min(gpusPerNode, MAX_BLOCK_COLS));
  const blockRows = Math.max(1, Math.ceil(gpusPerNode / MAX_BLOCK_COLS));
  const minCell = Math.max(2, Math.round(3 * scale));
  let cell = Math.round(28 * scale);
  for (;;) {
    const layout = layoutFor(cell, scale, nodes, gpusPerNode, blockCols, blockRows, width);
    if (layout.height <= maxHeight || cell <= minCell) return layout;
    cell -= 1;
  }
}

function layoutFor(
  cell: number,
  scale: number,
  nodes: number,
  gpusPerNode: number,
  blockCols: number,
  blockRows: number,
  width: number,
): HeatmapLayout {
  const cellGap = cell >= 5 * scale ? Math.max(1, Math.round(scale)) : 0;
  const nodeGap = Math.max(Math.round(2 * scale), Math.round(cell / 2));
  const labelHeight = cell >= LABELS_FROM_CELL * scale ? Math.round(16 * scale) : 0;
  const blockWidth = blockCols * cell;
  const blockHeight = blockRows * cell + labelHeight;
  const nodesPerRow = Math.max(1, Math.floor((width + nodeGap) / (blockWidth + nodeGap)));
  const rows = Math.ceil(nodes / nodesPerRow);
  return {
    cell,
    cellGap,
    blockCols,
    blockRows,
    nodeGap,
    labelHeight,
    nodesPerRow,
    blockWidth,
    blockHeight,
    width: Math.max(1, Math.min(width, nodesPerRow * (blockWidth + nodeGap) - nodeGap)),
    height: Math.max(1, rows * (blockHeight + nodeGap) - nodeGap),
    nodes,
    gpusPerNode,
  };
}

/** Top-left corner of a node's block (its label included). */
export function blockOrigin(layout: HeatmapLayout, node: number): [number, number] {
  const col = node % layout.nodesPerRow;
  const row = Math.floor(node / layout.nodesPerRow);
  return [col * (layout.blockWidth + layout.nodeGap), row * (layout.blockHeight + layout.nodeGap)];
}

/** Top-left corner of a slot's painted square. */
export function cellOrigin(layout: HeatmapLayout, slot: number): [number, number] {
  const node = Math.floor(slot / layout.gpusPerNode);
  const gpu = slot % layout.gpusPerNode;
  const [x, y] = blockOrigin(layout, node);
  return [
    x + (gpu % layout.blockCols) * layout.cell,
    y + layout.labelHeight + Math.floor(gpu / layout.blockCols) * layout.cell,
  ];
}

/** The slot under a point, or -1 for gaps, labels and empty space. */
export function slotAt(layout: HeatmapLayout, x: number, y: number): number {
  if (x < 0 || y < 0 || layout.gpusPerNode === 0) return -1;
  const col = Math.floor(x / (layout.blockWidth + layout.nodeGap));
  const row = Math.floor(y / (layout.blockHeight + layout.nodeGap));
  if (col >= layout.nodesPerRow) return -1;
  const node = row * layout.nodesPerRow + col;
  if (node >= layout.nodes) return -1;
  const inX = x - col * (layout.blockWidth + layout.nodeGap);
  const inY = y - row * (layout.blockHeight + layout.nodeGap) - layout.labelHeight;
  if (inX >= layout.blockWidth || inY < 0 || inY >= layout.blockHeight - layout.labelHeight) {
    return -1;
  }
  const gpu = Math.floor(inY / layout.cell) * layout.blockCols + Math.floor(inX / layout.cell);
  if (gpu >= layout.gpusPerNode) return -1;
  return node * layout.gpusPerNode + gpu;
}
