import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { TelemetryFrame } from '../../lib/apiTypes';
import type * as HeatmapModule from './GpuHeatmap';
import { FIELDS, type Field } from './heatmapData';
import { cellOrigin, computeLayout } from './heatmapLayout';
import { HeatmapStore } from './heatmapStore';

// src/test/setup.ts stands a plain element in for the heatmap everywhere else; this file
// checks the real canvas's pointer handling (jsdom has no layout, so nothing is painted).
const { GpuHeatmap } = await vi.importActual<typeof HeatmapModule>('./GpuHeatmap');

const FRAME = {
  type: 'telemetry.frame',
  topic: 'heatmap',
  epoch: 'e1',
  seq: 1,
  base: 0,
  at: 1,
  data: {
    fields: [...FIELDS],
    cells: {
      'node-a:0': [10, 50, 40, 100, 5],
      'node-a:1': [20, 50, 40, 100, 5],
      'node-b:1': [90, 100, 70, 300, 80],
    },
    removed: [],
    summary: {},
  },
} as unknown as TelemetryFrame;

const LABELS = Object.fromEntries(FIELDS.map((f) => [f, f])) as Record<Field, string>;

function setup(onCellClick?: (node: string, gpu: number) => void) {
  const store = new HeatmapStore();
  store.apply(FRAME);
  render(
    <GpuHeatmap
      store={store}
      field="util"
      label="heatmap"
      fieldLabels={LABELS}
      emptyLabel="empty"
      onCellClick={onCellClick}
      clickHint="Click a GPU for its history"
    />,
  );
  // The component's own layout: jsdom gives the wrapper no width, so one block per row.
  const layout = computeLayout(store.nodes.length, store.gpusPerNode, 0, 640, 1);
  /** The middle of a slot's square, in the canvas's CSS pixels. */
  const at = (key: string) => {
    const [x, y] = cellOrigin(layout, store.slotOf(key));
    const half = (layout.cell - layout.cellGap) / 2;
    return { clientX: x + half, clientY: y + half };
  };
  return { canvas: screen.getByRole('img', { name: 'heatmap' }), at };
}

describe('GPU heatmap clicks', () => {
  it("opens a GPU's cell, with a pointer only over GPUs", () => {
    const opened = vi.fn();
    const { canvas, at } = setup(opened);
    expect(canvas.style.cursor).toBe('crosshair');

    fireEvent.mouseMove(canvas, at('node-b:1'));
    expect(canvas.style.cursor).toBe('pointer');
    expect(screen.getByTestId('heatmap-tooltip').textContent).toContain(
      'Click a GPU for its history',
    );
    fireEvent.click(canvas, at('node-b:1'));
    expect(opened).toHaveBeenCalledWith('node-b', 1);

    // node-b has no GPU 0 in view: an empty slot is no link.
    fireEvent.mouseMove(canvas, at('node-b:0'));
    expect(canvas.style.cursor).toBe('crosshair');
    fireEvent.click(canvas, at('node-b:0'));
    // Nor is the gap beside the blocks.
    fireEvent.click(canvas, { clientX: 500, clientY: 5 });
    expect(opened).toHaveBeenCalledTimes(1);

    // A click needs no hover first (a tap on a touch screen).
    fireEvent.mouseLeave(canvas);
    fireEvent.click(canvas, at('node-a:0'));
    expect(opened).toHaveBeenLastCalledWith('node-a', 0);
  });

  it('leaves cells alone where a click opens nothing', () => {
    const { canvas, at } = setup();
    fireEvent.mouseMove(canvas, at('node-b:1'));
    expect(screen.getByTestId('heatmap-tooltip').textContent).not.toContain('Click');
    expect(canvas.style.cursor).toBe('crosshair');
  });
});
