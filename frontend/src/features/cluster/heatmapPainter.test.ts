import { describe, expect, it } from 'vitest';
import type { TelemetryFrame } from '../../lib/apiTypes';
import { EMPTY_COLOUR, hexToRgb, levelOf, scaleColours } from './heatmapData';
import { cellOrigin, computeLayout } from './heatmapLayout';
import { HeatmapPainter } from './heatmapPainter';
import { HeatmapStore } from './heatmapStore';

/** A 2D context that records putImageData calls (jsdom has no canvas). */
function fakeCanvas() {
  const puts: { dx: number; dy: number; w: number; h: number; data: Uint8ClampedArray }[] = [];
  const context = {
    createImageData: (w: number, h: number) => ({
      width: w,
      height: h,
      data: new Uint8ClampedArray(w * h * 4),
    }),
    putImageData: (
      image: { width: number; height: number; data: Uint8ClampedArray },
      _x: number,
      _y: number,
      dx = 0,
      dy = 0,
      w = image.width,
      h = image.height,
    ) => {
      puts.push({ dx, dy, w, h, data: image.data });
    },
  };
  const canvas = { width: 0, height: 0, getContext: () => context };
  return { canvas: canvas as unknown as HTMLCanvasElement, puts };
}

function frame(seq: number, base: number, cells: Record<string, number[]>): TelemetryFrame {
  return {
    type: 'telemetry.frame',
    topic: 'heatmap',
    epoch: 'e',
    seq,
    base,
    at: seq,
    data: { fields: ['util'], cells, removed: [], summary: {} },
  };
}

function pixel(data: Uint8ClampedArray, width: number, x: number, y: number): number[] {
  const at = (y * width + x) * 4;
  return [data[at] ?? -1, data[at + 1] ?? -1, data[at + 2] ?? -1];
}

describe('HeatmapPainter', () => {
  it('paints every cell once, then only the rectangle around changed cells', () => {
    const store = new HeatmapStore();
    const cells: Record<string, number[]> = {};
    for (let n = 0; n < 40; n += 1) for (let g = 0; g < 8; g += 1) cells[`n${n}:${g}`] = [0];
    delete cells['n0:7'];
    store.apply(frame(1, 0, cells));
    const layout = computeLayout(store.nodes.length, store.gpusPerNode, 600, 400);
    const { canvas, puts } = fakeCanvas();
    const painter = new HeatmapPainter(canvas);
    painter.configure(layout, store.layoutVersion, 0, 100);

    expect(painter.paint(store)).toBe(320);
    expect(canvas.width).toBe(layout.width);
    expect(puts).toHaveLength(1);
    const full = puts[0];
    if (full === undefined) throw new Error('no paint');
    const palette = scaleColours();
    const [x0, y0] = cellOrigin(layout, 0);
    expect(pixel(full.data, layout.width, x0, y0)).toEqual(palette[0]);
    const [xe, ye] = cellOrigin(layout, 7);
    expect(pixel(full.data, layout.width, xe, ye)).toEqual(hexToRgb(EMPTY_COLOUR));

    // Nothing changed: nothing drawn.
    expect(painter.paint(store)).toBe(0);

    const slot = store.slotOf('n21:3');
    store.apply(frame(2, 1, { 'n21:3': [90] }));
    expect(painter.paint(store)).toBe(1);
    const partial = puts[1];
    if (partial === undefined) throw new Error('no second paint');
    const [x, y] = cellOrigin(layout, slot);
    expect(partial).toMatchObject({ dx: x, dy: y, w: layout.cell, h: layout.cell });
    expect(pixel(partial.data, layout.width, x + 1, y + 1)).toEqual(palette[levelOf(90, 100)]);
  });

  it('waits for the new layout when the slots moved', () => {
    const store = new HeatmapStore();
    store.apply(frame(1, 0, { 'a:0': [1] }));
    const { canvas, puts } = fakeCanvas();
    const painter = new HeatmapPainter(canvas);
    painter.configure(computeLayout(1, 1, 300, 300), store.layoutVersion, 0, 100);
    store.apply(frame(2, 1, { 'b:0': [5] })); // a new node: relayout
    expect(painter.paint(store)).toBe(0);
    expect(puts).toHaveLength(0);
    painter.configure(computeLayout(2, 1, 300, 300), store.layoutVersion, 0, 100);
    expect(painter.paint(store)).toBe(2);
  });
});
