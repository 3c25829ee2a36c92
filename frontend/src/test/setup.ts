import { cleanup, configure } from '@testing-library/react';
import { createElement } from 'react';
import { afterEach, beforeEach, vi } from 'vitest';
import { setLanguage } from '../lib/i18n';
import { FakeWebSocket } from './fakeWebSocket';

// Lazy route chunks are transformed on first import under vitest, which can take seconds.
// Generous, because CI machines are shared and can be slow.
configure({ asyncUtilTimeout: 10_000 });

// echarts cannot lay out in jsdom (no sizes), and importing it costs seconds per test file.
// The numbers it draws are asserted through the table beside it; the end-to-end run in
// Chromium checks the chart itself.
// The stand-in offers a button per GPU in view when cells are clickable, so a test can
// "click a cell" (GpuHeatmap.test.tsx clicks the real canvas).
vi.mock('../features/cluster/GpuHeatmap', () => ({
  GpuHeatmap: ({
    label,
    store,
    onCellClick,
  }: {
    label: string;
    store: { slotCount: number; present: Uint8Array; keyOf: (slot: number) => string };
    onCellClick?: (node: string, gpu: number) => void;
  }) =>
    createElement(
      'div',
      null,
      createElement('div', { 'data-testid': 'gpu-heatmap', role: 'img', 'aria-label': label }),
      onCellClick &&
        Array.from({ length: store.slotCount }, (_, slot) => slot)
          .filter((slot) => store.present[slot] === 1)
          .map((slot) => {
            const key = store.keyOf(slot);
            const split = key.lastIndexOf(':');
            return createElement(
              'button',
              {
                key,
                type: 'button',
                'data-testid': `heatmap-cell-${key}`,
                onClick: () => {
                  onCellClick(key.slice(0, split), Number(key.slice(split + 1)));
                },
              },
              key,
            );
          }),
    ),
}));

vi.mock('../features/overview/GpuModelChart', () => ({
  GpuModelChart: ({ label }: { label: string }) =>
    createElement('div', { 'data-testid': 'gpu-model-chart', role: 'img', 'aria-label': label }),
}));

// The chart stand-ins expose what each chart was given, for the tests to assert on. With
// isolate: false the module graph is shared, so every test file must see the same mock.
vi.mock('../features/experiments/CurvesChart', () => ({
  CurvesChart: ({
    lines,
    testId,
  }: {
    lines: { name: string; values: number[] }[];
    testId: string;
  }) =>
    createElement('div', {
      'data-testid': testId,
      'data-lines': lines.map((l) => `${l.name}:${l.values.join('|')}`).join(';'),
    }),
}));

vi.mock('../features/experiments/ParallelChart', () => ({
  ParallelChart: ({ axes, rows }: { axes: { name: string }[]; rows: { values: unknown[] }[] }) =>
    createElement('div', {
      'data-testid': 'parallel-chart',
      'data-axes': axes.map((a) => a.name).join(','),
      'data-rows': rows.map((r) => r.values.join('|')).join(';'),
    }),
}));

vi.mock('../features/telemetry/HistoryChart', () => ({
  HistoryChart: ({
    panels,
    names,
    label,
  }: {
    panels: {
      upper: { key: string; points: [number, number | null][] }[];
      lower: { key: string; points: [number, number | null][] }[];
    };
    names: Record<string, string>;
    label: string;
  }) =>
    createElement('div', {
      'data-testid': 'history-chart',
      role: 'img',
      'aria-label': label,
      // "name:v|v;name:v" per panel; a gap (null) shows as "-".
      'data-upper': panels.upper
        .map((l) => `${names[l.key] ?? l.key}:${l.points.map((p) => p[1] ?? '-').join('|')}`)
        .join(';'),
      'data-lower': panels.lower
        .map((l) => `${names[l.key] ?? l.key}:${l.points.map((p) => p[1] ?? '-').join('|')}`)
        .join(';'),
    }),
}));

vi.mock('../features/telemetry/GpuHistoryChart', () => ({
  GpuHistoryChart: ({
    lines,
    names,
    label,
    span,
  }: {
    lines: { key: string; unit: string; points: [number, number][] }[];
    names: Record<string, string>;
    label: string;
    span: [number, number];
  }) =>
    createElement('div', {
      'data-testid': 'gpu-history-chart',
      role: 'img',
      'aria-label': label,
      // "name (unit):v|v;..." per line, and the time axis's length in seconds.
      'data-lines': lines
        .map((l) => `${names[l.key] ?? l.key} (${l.unit}):${l.points.map((p) => p[1]).join('|')}`)
        .join(';'),
      'data-span-s': String((span[1] - span[0]) / 1000),
    }),
}));

vi.mock('../features/usage/UsageChart', () => ({
  UsageChart: ({
    labels,
    series,
    cost,
  }: {
    labels: string[];
    series: { name: string; data: number[] }[];
    cost: number[];
  }) =>
    createElement('div', {
      'data-testid': 'usage-chart',
      'data-labels': labels.join(','),
      'data-series': series.map((s) => `${s.name}:${s.data.join('|')}`).join(';'),
      'data-cost': cost.join(','),
    }),
}));

vi.mock('../features/inference/TrafficChart', () => ({
  TrafficChart: ({
    samples,
    label,
  }: {
    samples: { at: string; qps: number; p95_ms: number; ready_replicas: number }[];
    label: string;
  }) =>
    createElement('div', {
      'data-testid': 'traffic-chart',
      role: 'img',
      'aria-label': label,
      'data-samples': samples
        .map((s) => [s.at, s.qps, s.p95_ms, s.ready_replicas].join('|'))
        .join(';'),
    }),
}));

vi.mock('../features/whatif/WhatIfChart', () => ({
  WhatIfChart: ({
    start,
    lines,
    label,
    outages = [],
  }: {
    start: string;
    lines: {
      name: string;
      actual?: boolean;
      points: { t_h: number; allocation: number; waiting: number }[];
    }[];
    label: string;
    outages?: { start_h: number; end_h: number }[];
  }) =>
    createElement('div', {
      'data-testid': 'whatif-chart',
      role: 'img',
      'aria-label': label,
      'data-start': start,
      'data-outages': outages.map((b) => `${b.start_h}-${b.end_h}`).join(','),
      'data-lines': lines
        .map(
          (l) =>
            `${l.name}${l.actual ? ' (actual)' : ''}:` +
            l.points.map((p) => [p.t_h, p.allocation, p.waiting].join('/')).join('|'),
        )
        .join(';'),
    }),
}));

// jsdom lacks these browser APIs; antd (responsive grid, Select) and echarts call them.
Object.defineProperty(window, 'matchMedia', {
  writable: true,
  configurable: true,
  value: (query: string): MediaQueryList => ({
    matches: false,
    media: query,
    onchange: null,
    // Deprecated, but older code paths in antd's dependencies still call them.
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- stand-in must offer the old API too
    addListener: () => undefined,
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- same as addListener
    removeListener: () => undefined,
    addEventListener: () => undefined,
    removeEventListener: () => undefined,
    dispatchEvent: () => false,
  }),
});

// antd measures scrollbars via ::-webkit-scrollbar styles, which jsdom does not implement.
const getComputedStyle = window.getComputedStyle.bind(window);
window.getComputedStyle = (element: Element) => getComputedStyle(element);

class ResizeObserverStub {
  observe(): void {
    // jsdom has no layout, so nothing ever resizes.
  }
  unobserve(): void {
    // See observe().
  }
  disconnect(): void {
    // See observe().
  }
}
if (!('ResizeObserver' in globalThis)) {
  globalThis.ResizeObserver = ResizeObserverStub;
}

beforeEach(async () => {
  document.cookie = 'csrftoken=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/';
  await setLanguage('en');
  // A fresh browser: no language of its own chosen (setLanguage stored one).
  window.localStorage.clear();
  // No real sockets in tests: the shell's live-update client gets a hand-driven fake.
  FakeWebSocket.instances = [];
  vi.stubGlobal('WebSocket', FakeWebSocket);
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});
