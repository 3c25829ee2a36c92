import {
  memo,
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  useSyncExternalStore,
} from 'react';
import { EMPTY_COLOUR, FIXED_MAX, niceCeil, SCALE_STOPS, type Field } from './heatmapData';
import { blockOrigin, cellOrigin, computeLayout, slotAt } from './heatmapLayout';
import { HeatmapPainter } from './heatmapPainter';
import { splitKey, type HeatmapStore } from './heatmapStore';

export interface GpuHeatmapProps {
  store: HeatmapStore;
  field: Field;
  /** Accessible name of the picture. */
  label: string;
  /** Display names of the cell fields, for the tooltip. */
  fieldLabels: Record<Field, string>;
  /** Legend text for slots without a GPU in view. */
  emptyLabel: string;
  maxHeight?: number;
  /** Called with a GPU's host and index when its cell is clicked; without it cells do not
   * react to clicks (and the cursor says so). */
  onCellClick?: (node: string, gpu: number) => void;
  /** The tooltip's last line when cells are clickable (what a click does). */
  clickHint?: string;
  /** Called after every paint with its duration (ms) and the cells drawn (benchmarks). */
  onPaint?: (ms: number, cells: number) => void;
}

function fieldMax(store: HeatmapStore, field: number): number {
  let max = 0;
  const width = store.fields.length;
  for (let i = field; i < store.values.length; i += width) {
    const v = store.values[i] ?? 0;
    if (v > max) max = v;
  }
  return niceCeil(max);
}

interface Hover {
  slot: number;
  left: number;
  top: number;
}

/**
 * Every GPU of the view as one canvas: node blocks in host order, colour = the chosen field.
 * Subscribes to the store itself and repaints changed cells once per animation frame, so the
 * page around it does not re-render when telemetry arrives.
 */
export const GpuHeatmap = memo(function GpuHeatmap({
  store,
  field,
  label,
  fieldLabels,
  emptyLabel,
  maxHeight = 640,
  onCellClick,
  clickHint,
  onPaint,
}: GpuHeatmapProps) {
  const wrapper = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const painter = useRef<HeatmapPainter | null>(null);
  const frame = useRef<number | null>(null);
  const [width, setWidth] = useState(0);
  const [seenMax, setSeenMax] = useState<Partial<Record<Field, number>>>({});
  const [hover, setHover] = useState<Hover | null>(null);
  const layoutVersion = useSyncExternalStore(
    useCallback((listener) => store.subscribe(listener), [store]),
    () => store.layoutVersion,
  );
  const scale = typeof window === 'undefined' ? 1 : window.devicePixelRatio || 1;
  const fieldIndex = store.fields.indexOf(field);
  const max = FIXED_MAX[field] ?? Math.max(seenMax[field] ?? 0, fieldMax(store, fieldIndex));
  const layout = useMemo(
    () =>
      computeLayout(
        store.nodes.length,
        store.gpusPerNode,
        Math.floor(width * scale),
        maxHeight * scale,
        scale,
      ),
    // layoutVersion: the store's node list changed.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [store, layoutVersion, width, scale, maxHeight],
  );

  useLayoutEffect(() => {
    const element = wrapper.current;
    if (element === null) return undefined;
    setWidth(element.clientWidth);
    const observer = new ResizeObserver(() => {
      setWidth(element.clientWidth);
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
    };
  }, []);

  const paint = useCallback(() => {
    frame.current = null;
    const target = painter.current;
    if (target === null) return;
    if (FIXED_MAX[field] === undefined && fieldMax(store, fieldIndex) > max) {
      // The scale grows (never shrinks, so colours do not twitch): re-render repaints all.
      setSeenMax((m) => ({ ...m, [field]: fieldMax(store, fieldIndex) }));
      return;
    }
    const started = performance.now();
    const cells = target.paint(store);
    onPaint?.(performance.now() - started, cells);
  }, [store, field, fieldIndex, max, onPaint]);

  useEffect(() => {
    const element = canvas.current;
    if (element === null || width === 0) return;
    painter.current ??= new HeatmapPainter(element);
    painter.current.configure(layout, layoutVersion, Math.max(0, fieldIndex), max);
    paint();
  }, [layout, layoutVersion, fieldIndex, max, width, paint]);

  useEffect(() => {
    const unsubscribe = store.subscribe(() => {
      frame.current ??= requestAnimationFrame(paint);
    });
    return () => {
      unsubscribe();
      if (frame.current !== null) cancelAnimationFrame(frame.current);
      frame.current = null;
    };
  }, [store, paint]);

  /** The GPU under the pointer (a present slot) and where, in CSS pixels; null elsewhere. */
  const pointed = (event: React.MouseEvent<HTMLCanvasElement>): Hover | null => {
    const box = event.currentTarget.getBoundingClientRect();
    const x = event.clientX - box.left;
    const y = event.clientY - box.top;
    const slot = slotAt(layout, x * scale, y * scale);
    return slot < 0 || store.present[slot] !== 1 ? null : { slot, left: x, top: y };
  };
  const onMove = (event: React.MouseEvent<HTMLCanvasElement>) => {
    setHover(pointed(event));
  };
  // From the click's own position, not the hover: a tap on a touch screen has no hover.
  const onClick = (event: React.MouseEvent<HTMLCanvasElement>) => {
    const cell = onCellClick === undefined ? null : pointed(event);
    if (cell === null || onCellClick === undefined) return;
    const [host, gpu] = splitKey(store.keyOf(cell.slot));
    onCellClick(host, gpu);
  };

  const cssCell = (layout.cell - layout.cellGap) / scale;
  const hovered = hover === null ? null : cellOrigin(layout, hover.slot);
  const labels =
    layout.labelHeight > 0
      ? store.nodes.map((host, node) => {
          const [x, y] = blockOrigin(layout, node);
          return { host, left: x / scale, top: y / scale };
        })
      : [];

  return (
    <div ref={wrapper} data-testid="gpu-heatmap" style={{ width: '100%', position: 'relative' }}>
      <canvas
        ref={canvas}
        role="img"
        aria-label={label}
        onMouseMove={onMove}
        onClick={onClick}
        onMouseLeave={() => {
          setHover(null);
        }}
        style={{
          display: 'block',
          width: layout.width / scale,
          height: layout.height / scale,
          // A pointer only over a GPU a click opens.
          cursor: onCellClick !== undefined && hover !== null ? 'pointer' : 'crosshair',
        }}
      />
      {labels.map((l) => (
        <span
          key={l.host}
          aria-hidden
          style={{
            position: 'absolute',
            left: l.left,
            top: l.top,
            width: layout.blockWidth / scale,
            fontSize: 11,
            lineHeight: `${layout.labelHeight / scale}px`,
            overflow: 'hidden',
            whiteSpace: 'nowrap',
            textOverflow: 'ellipsis',
            color: '#4b5563',
            pointerEvents: 'none',
          }}
        >
          {l.host}
        </span>
      ))}
      {hover !== null && hovered !== null && (
        <>
          <div
            aria-hidden
            style={{
              position: 'absolute',
              left: hovered[0] / scale - 1,
              top: hovered[1] / scale - 1,
              width: cssCell + 2,
              height: cssCell + 2,
              outline: '2px solid #111827',
              pointerEvents: 'none',
            }}
          />
          <div
            role="tooltip"
            data-testid="heatmap-tooltip"
            style={{
              position: 'absolute',
              left: Math.min(hover.left + 12, Math.max(0, width - 200)),
              top: hover.top + 12,
              background: 'rgba(17, 24, 39, 0.92)',
              color: '#fff',
              borderRadius: 6,
              padding: '6px 10px',
              fontSize: 12,
              pointerEvents: 'none',
              whiteSpace: 'nowrap',
              zIndex: 2,
            }}
          >
            <div style={{ fontWeight: 600 }}>
              {store.keyOf(hover.slot).replace(/:(\d+)$/, ' · GPU $1')}
            </div>
            {store.fields.map((f, i) => (
              <div key={f}>
                {(fieldLabels as Partial<Record<string, string>>)[f] ?? f}:{' '}
                {store.value(hover.slot, i)}
              </div>
            ))}
            {onCellClick !== undefined && clickHint !== undefined && (
              <div style={{ marginTop: 4, opacity: 0.75 }}>{clickHint}</div>
            )}
          </div>
        </>
      )}
      <div
        aria-hidden
        style={{ display: 'flex', alignItems: 'center', gap: 8, marginTop: 8, fontSize: 12 }}
      >
        <span>0</span>
        <span
          style={{
            width: 160,
            height: 8,
            borderRadius: 4,
            background: `linear-gradient(to right, ${SCALE_STOPS.join(', ')})`,
          }}
        />
        <span data-testid="heatmap-max">{max}</span>
        <span style={{ width: 10, height: 10, background: EMPTY_COLOUR, marginInlineStart: 12 }} />
        <span>{emptyLabel}</span>
      </div>
    </div>
  );
});
