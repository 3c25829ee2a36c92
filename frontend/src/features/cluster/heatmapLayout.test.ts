import { describe, expect, it } from 'vitest';
import { cellOrigin, computeLayout, slotAt } from './heatmapLayout';

describe('heatmap layout', () => {
  it('fits 10,000 GPUs (1,250 nodes of 8) on one screen', () => {
    const layout = computeLayout(1250, 8, 1300, 640);
    const rows = Math.ceil(1250 / layout.nodesPerRow);
    expect(layout.height).toBeLessThanOrEqual(640);
    expect(layout.width).toBeLessThanOrEqual(1300);
    expect(layout.cell).toBeGreaterThanOrEqual(3);
    expect(rows * layout.nodesPerRow).toBeGreaterThanOrEqual(1250);
    expect(layout.labelHeight).toBe(0);
  });

  it('gives a small cluster big cells with room for host labels', () => {
    const layout = computeLayout(4, 8, 1200, 640);
    expect(layout.cell).toBe(28);
    expect(layout.labelHeight).toBeGreaterThan(0);
  });

  it('maps every cell centre back to its slot (tooltip index math)', () => {
    for (const [nodes, gpus, width] of [
      [1250, 8, 1300],
      [5, 8, 400],
      [7, 16, 900],
      [3, 2, 200],
    ] as const) {
      const layout = computeLayout(nodes, gpus, width, 640);
      for (let slot = 0; slot < nodes * gpus; slot += 1) {
        const [x, y] = cellOrigin(layout, slot);
        const centre = Math.floor((layout.cell - layout.cellGap) / 2);
        expect(slotAt(layout, x + centre, y + centre)).toBe(slot);
        expect(slotAt(layout, x, y)).toBe(slot);
      }
    }
  });

  it('answers -1 for gaps, labels and space past the last node', () => {
    const layout = computeLayout(3, 8, 1200, 640);
    // Above the first cell: the host label.
    expect(slotAt(layout, 1, 1)).toBe(-1);
    // Between the first and second node blocks.
    expect(slotAt(layout, layout.blockWidth + 1, layout.labelHeight + 1)).toBe(-1);
    // A fourth block's place on the first row: there are only three nodes.
    expect(
      slotAt(layout, 3 * (layout.blockWidth + layout.nodeGap) + 1, layout.labelHeight + 1),
    ).toBe(-1);
    expect(slotAt(layout, -1, 5)).toBe(-1);
    expect(slotAt(layout, 5, layout.height + 50)).toBe(-1);
  });

  it('wraps nodes of 16 GPUs into two rows of 8', () => {
    const layout = computeLayout(2, 16, 1200, 640);
    expect(layout.blockCols).toBe(8);
    expect(layout.blockRows).toBe(2);
    const [x0, y0] = cellOrigin(layout, 0);
    const [x8, y8] = cellOrigin(layout, 8);
    expect(x8).toBe(x0);
    expect(y8).toBe(y0 + layout.cell);
  });
});
