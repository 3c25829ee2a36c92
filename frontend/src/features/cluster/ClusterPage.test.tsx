import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';
import { toHeatmap } from './heatmapData';

const FRAME = {
  type: 'telemetry.frame',
  topic: 'heatmap',
  epoch: 'e1',
  seq: 3,
  base: 0,
  at: 1,
  data: {
    fields: ['util', 'fb_used_mib', 'temp_c', 'power_w', 'sm_pct'],
    cells: {
      'node-b:1': [90, 100, 70, 300, 80],
      'node-a:0': [10, 50, 40, 100, 5],
      'node-b:0': [55, 60, 60, 200, 50],
    },
    removed: [],
    summary: { cluster: { gpus: 3, busy: 2, util: 51.7 } },
  },
};

describe('cluster', () => {
  it('turns a keyframe into heatmap rows and columns', () => {
    expect(toHeatmap(FRAME, 'temp_c')).toEqual({
      nodes: ['node-a', 'node-b'],
      gpus: 2,
      cells: [
        [1, 1, 70],
        [0, 0, 40],
        [0, 1, 60],
      ],
      max: 70,
    });
  });

  it('shows the summary and the heatmap of every GPU for a platform admin', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/telemetry/snapshot/': { status: 200, body: FRAME },
    });
    renderApp('/cluster');
    expect((await screen.findByTestId('heatmap-caption')).textContent).toBe('2 nodes, 3 GPUs');
    expect(
      await screen.findByRole('img', { name: 'Heatmap of Utilization % per GPU' }),
    ).toBeTruthy();
    expect(requests.find((r) => r.path === '/api/v1/telemetry/snapshot/')?.query).toBe(
      'topic=heatmap',
    );
  });

  it('shows the empty state when no GPU is in view', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/telemetry/snapshot/': {
        status: 200,
        body: { ...FRAME, data: { ...FRAME.data, cells: {}, summary: {} } },
      },
    });
    renderApp('/cluster');
    expect(await screen.findByTestId('cluster-empty')).toBeTruthy();
  });
});
