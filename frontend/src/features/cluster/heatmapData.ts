/** Colour scale and value range of the GPU heatmap (pure functions, shared with the legend). */

export const FIELDS = ['util', 'fb_used_mib', 'temp_c', 'power_w', 'sm_pct'] as const;
export type Field = (typeof FIELDS)[number];

/** Fields with a natural ceiling; the others scale to the largest value seen. */
export const FIXED_MAX: Partial<Record<Field, number>> = { util: 100, sm_pct: 100, temp_c: 90 };

export const SCALE_STOPS = ['#eef3fb', '#9ec5fe', '#2f6fed', '#f59e0b', '#dc2626'] as const;
export const EMPTY_COLOUR = '#e5e7eb';
export const BACKGROUND = '#ffffff';
export const LEVELS = 256;

/** The next 1, 2 or 5 x 10^k at or above `value`: a scale that does not twitch every second. */
export function niceCeil(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) {
    if (value <= step * power) return step * power;
  }
  return 10 * power;
}

function rgb(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** `LEVELS` colours along the scale as [r, g, b]. */
export function scaleColours(): [number, number, number][] {
  const stops = SCALE_STOPS.map(rgb);
  return Array.from({ length: LEVELS }, (_, level) => {
    const position = (level / (LEVELS - 1)) * (stops.length - 1);
    const lower = Math.min(stops.length - 2, Math.floor(position));
    const t = position - lower;
    const a = stops[lower] ?? [0, 0, 0];
    const b = stops[lower + 1] ?? [0, 0, 0];
    return [0, 1, 2].map((c) => Math.round((a[c] ?? 0) + ((b[c] ?? 0) - (a[c] ?? 0)) * t)) as [
      number,
      number,
      number,
    ];
  });
}

/** Colour level of a value on a 0..max scale (clamped). */
export function levelOf(value: number, max: number): number {
  const level = Math.round((value / max) * (LEVELS - 1));
  return level < 0 ? 0 : level > LEVELS - 1 ? LEVELS - 1 : level;
}

/** One RGBA pixel as the Uint32 that writes it into ImageData on this machine's byte order. */
export function packPixel([r, g, b]: [number, number, number]): number {
  const bytes = new Uint8Array([r, g, b, 255]);
  return new Uint32Array(bytes.buffer)[0] ?? 0;
}

export { rgb as hexToRgb };
