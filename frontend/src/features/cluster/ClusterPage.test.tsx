import { act, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FakeWebSocket } from '../../test/fakeWebSocket';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';

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

function telemetrySocket(): FakeWebSocket {
  const socket = FakeWebSocket.instances.find((s) => s.url.endsWith('/ws/v1/telemetry/'));
  if (socket === undefined) throw new Error('the cluster page opened no telemetry socket');
  return socket;
}

describe('cluster', () => {
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

  it('streams deltas from the telemetry socket and reloads the snapshot on a gap', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/telemetry/snapshot/': [
        { status: 200, body: FRAME },
        {
          status: 200,
          body: {
            ...FRAME,
            seq: 9,
            data: { ...FRAME.data, summary: { cluster: { gpus: 3, busy: 3, util: 80 } } },
          },
        },
      ],
    });
    renderApp('/cluster');
    expect((await screen.findByTestId('heatmap-caption')).textContent).toBe('2 nodes, 3 GPUs');
    const socket = telemetrySocket();
    act(() => {
      socket.open();
    });
    expect(socket.sent).toContainEqual({ action: 'subscribe', topic: 'heatmap' });
    expect(screen.getByTestId('heatmap-connection').dataset.state).toBe('open');
    act(() => {
      socket.receive({
        ...FRAME,
        seq: 4,
        base: 3,
        data: {
          ...FRAME.data,
          cells: { 'node-c:0': [99, 1, 1, 1, 1] },
          summary: { cluster: { gpus: 4, busy: 3, util: 60 } },
        },
      });
    });
    expect(screen.getByTestId('heatmap-caption').textContent).toBe('3 nodes, 4 GPUs');
    expect(screen.getByTestId('cluster-gpus').textContent).toContain('4');
    const before = requests.filter((r) => r.path === '/api/v1/telemetry/snapshot/').length;
    act(() => {
      socket.receive({ ...FRAME, seq: 8, base: 7 });
    });
    // The gap reloads the snapshot (seq 9), which replaces the view: node-c is gone again.
    expect(await screen.findByText('2 nodes, 3 GPUs')).toBeTruthy();
    expect(requests.filter((r) => r.path === '/api/v1/telemetry/snapshot/').length).toBe(
      before + 1,
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
