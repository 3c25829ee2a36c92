import {
  BACKGROUND,
  EMPTY_COLOUR,
  hexToRgb,
  levelOf,
  packPixel,
  scaleColours,
} from './heatmapData';
import { cellOrigin, type HeatmapLayout } from './heatmapLayout';
import type { HeatmapStore } from './heatmapStore';

/**
 * Paints a HeatmapStore into one canvas.
 *
 * Cells are written as pixels into an ImageData the size of the canvas (a typed-array fill per
 * row of a cell) and only the rectangle around the changed cells is put back, so an update
 * costs in proportion to what changed rather than one draw call per GPU; no DOM node per GPU.
 */
export class HeatmapPainter {
  private readonly context: CanvasRenderingContext2D;
  private image: ImageData | null = null;
  private pixels = new Uint32Array(0);
  private readonly palette = new Uint32Array(scaleColours().map(packPixel));
  private readonly empty = packPixel(hexToRgb(EMPTY_COLOUR));
  private readonly background = packPixel(hexToRgb(BACKGROUND));
  private layout: HeatmapLayout | null = null;
  /** The store's slot arrangement `layout` was computed for. */
  private layoutVersion = -1;
  private field = 0;
  private max = 1;
  private needsFull = true;

  constructor(private readonly canvas: HTMLCanvasElement) {
    const context = canvas.getContext('2d', { alpha: false });
    if (context === null) throw new Error('2D canvas is not available');
    this.context = context;
  }

  /** New geometry or colouring: the next paint redraws every cell. */
  configure(layout: HeatmapLayout, layoutVersion: number, field: number, max: number): void {
    this.layoutVersion = layoutVersion;
    if (layout !== this.layout) {
      this.layout = layout;
      if (this.canvas.width !== layout.width) this.canvas.width = layout.width;
      if (this.canvas.height !== layout.height) this.canvas.height = layout.height;
      this.image = this.context.createImageData(layout.width, layout.height);
      this.pixels = new Uint32Array(this.image.data.buffer);
    }
    this.field = field;
    this.max = max > 0 ? max : 1;
    this.needsFull = true;
  }

  /** Draws what changed since the last paint; returns how many cells were drawn. */
  paint(store: HeatmapStore): number {
    const layout = this.layout;
    const image = this.image;
    // Slots moved and the new layout is not configured yet: its render will repaint everything.
    if (layout === null || image === null || store.layoutVersion !== this.layoutVersion) return 0;
    const dirty = store.takeDirty();
    if (this.needsFull) {
      this.pixels.fill(this.background);
      const slots = Math.min(store.slotCount, layout.nodes * layout.gpusPerNode);
      for (let slot = 0; slot < slots; slot += 1) this.paintCell(store, layout, slot);
      this.context.putImageData(image, 0, 0);
      this.needsFull = false;
      return slots;
    }
    if (dirty.length === 0) return 0;
    let left = layout.width;
    let top = layout.height;
    let right = 0;
    let bottom = 0;
    for (const slot of dirty) {
      const [x, y] = this.paintCell(store, layout, slot);
      if (x < left) left = x;
      if (y < top) top = y;
      if (x + layout.cell > right) right = x + layout.cell;
      if (y + layout.cell > bottom) bottom = y + layout.cell;
    }
    this.context.putImageData(image, 0, 0, left, top, right - left, bottom - top);
    return dirty.length;
  }

  private paintCell(store: HeatmapStore, layout: HeatmapLayout, slot: number): [number, number] {
    const [x, y] = cellOrigin(layout, slot);
    const value = store.value(slot, this.field);
    const colour = Number.isNaN(value) ? this.empty : (this.palette[levelOf(value, this.max)] ?? 0);
    const size = layout.cell - layout.cellGap;
    const stride = layout.width;
    if (x + size > stride || y + size > layout.height) return [x, y];
    for (let row = 0; row < size; row += 1) {
      const start = (y + row) * stride + x;
      this.pixels.fill(colour, start, start + size);
    }
    return [x, y];
  }
}
