import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { FakeWebSocket } from '../../test/fakeWebSocket';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, page, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';

const NODE = {
  id: 3,
  name: 'a800-train-003',
  pool: 'a800-train',
  accelerator_model: 'A800',
  accelerator_count: 8,
  health: 'faulty',
  cordoned: true,
  is_spare: false,
  open_incidents: 1,
  checks: [],
};
const INCIDENT = {
  id: 7,
  actions_taken: [
    ['2026-11-29T00:00:00Z', 'cordoned'],
    ['2026-11-29T00:00:01Z', 'drained: 1 job(s) restarted as whole gangs'],
    ['2026-11-29T00:00:02Z', 'hot spare a800-train-spare in service'],
  ],
  check_name: 'xid',
  closed_at: null,
  detail: '',
  fault: 'xid:79',
  fault_action: 'cordon_drain',
  jobs: [
    {
      job: 41,
      outcome: 'restarted',
      devices: 16,
      attempt: 0,
      resume_step: 4000,
      resume_from: 'checkpoint step 4000 /ckpt/step_4000',
      lost_gpu_seconds: 4800,
      created_at: '2026-11-29T00:00:01Z',
    },
  ],
  last_seen_at: '2026-11-29T00:00:00Z',
  lost_gpu_seconds: 4800,
  node: 3,
  node_name: 'a800-train-003',
  opened_at: '2026-11-29T00:00:00Z',
  remediations: 0,
  severity: 'critical',
  spare: 9,
  spare_name: 'a800-train-spare',
  state: 'open',
};
const ALERT = {
  id: 9,
  node: 3,
  node_name: 'a800-train-003',
  incident: 7,
  fault: 'xid:79',
  severity: 'critical',
  message: 'a800-train-003: xid:79',
  occurrences: 1,
  state: 'open',
  deliveries: { '1': 'http 204', '2': 'error: timed out' },
  delivery_attempts: 5,
  delivery_status: [
    { receiver: 1, receiver_name: 'oncall', state: 'sent', outcome: 'http 204' },
    { receiver: 2, receiver_name: 'ops-mail', state: 'failed', outcome: 'error: timed out' },
  ],
  created_at: '2026-11-29T00:00:00Z',
  acknowledged_at: null,
  acknowledged_by: null,
  resolved_at: null,
};
const SUMMARY = {
  status: 200,
  body: { total: 1, healthy: 0, degraded: 0, faulty: 1, cordoned: 1, spare: 0 },
};

function popupOf(text: HTMLElement): HTMLElement {
  const popup = text.closest('.ant-popover');
  if (!(popup instanceof HTMLElement)) throw new Error('no confirmation popup');
  return popup;
}

describe('health self-healing', () => {
  it('unfolds an incident and resolves it after confirming', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/nodes/': page([NODE]),
      'GET /api/v1/health/nodes/summary/': SUMMARY,
      'GET /api/v1/health/incidents/': [page([INCIDENT]), page([])],
      'GET /api/v1/health/alerts/': page([]),
      'POST /api/v1/health/incidents/7/resolve/': {
        status: 200,
        body: { ...INCIDENT, state: 'closed', closed_at: '2026-11-29T05:00:00Z' },
      },
    });
    renderApp('/health');
    const table = await screen.findByTestId('incidents-open');
    await within(table).findByText('xid:79');
    await user.click(within(table).getByRole('button', { name: /expand row/i }));
    const detail = await screen.findByTestId('incident-detail-7');
    expect(within(detail).getByText('a800-train-spare')).toBeTruthy();
    expect(within(detail).getByText(/drained: 1 job\(s\) restarted/)).toBeTruthy();
    expect(within(detail).getByText('checkpoint step 4000 /ckpt/step_4000')).toBeTruthy();
    expect(within(detail).getByText('#41')).toBeTruthy();
    expect(within(detail).getAllByText('1.33').length).toBe(2); // 4800 GPU-s, incident and job

    fireEvent.click(screen.getByTestId('resolve-7'));
    expect(requests.filter((r) => r.method === 'POST')).toEqual([]);
    const popup = popupOf(await screen.findByText(/Repaired\? Close xid:79 on a800-train-003/));
    fireEvent.click(within(popup).getByRole('button', { name: 'Resolve' }));
    expect(await screen.findByText('xid:79 resolved')).toBeTruthy();
    await waitFor(() => {
      expect(screen.queryByTestId('resolve-7')).toBeNull();
    });
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      '/api/v1/health/incidents/7/resolve/',
    ]);
  });

  it('drains a node after confirming and shows a refused uncordon', async () => {
    const IDLE = { ...NODE, id: 4, name: 'a800-train-004', health: 'healthy', cordoned: false };
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/nodes/': page([NODE, IDLE]),
      'GET /api/v1/health/nodes/summary/': SUMMARY,
      'GET /api/v1/health/incidents/': page([]),
      'GET /api/v1/health/alerts/': page([]),
      'POST /api/v1/health/nodes/4/drain/': { status: 200, body: { ...IDLE, cordoned: true } },
      'POST /api/v1/health/nodes/3/uncordon/': {
        status: 409,
        body: { detail: 'a800-train-003 is held by open incident(s) #7 (xid:79): resolve them' },
      },
    });
    renderApp('/health');
    fireEvent.click(await screen.findByTestId('drain-a800-train-004'));
    expect(requests.filter((r) => r.method === 'POST')).toEqual([]);
    const popup = popupOf(await screen.findByText(/Drain a800-train-004\?/));
    fireEvent.click(within(popup).getByRole('button', { name: 'Drain' }));
    expect(await screen.findByText('a800-train-004 drained')).toBeTruthy();
    fireEvent.click(screen.getByTestId('uncordon-a800-train-003'));
    expect(await screen.findByText(/held by open incident\(s\) #7/)).toBeTruthy();
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      '/api/v1/health/nodes/4/drain/',
      '/api/v1/health/nodes/3/uncordon/',
    ]);
  });

  it("shows each receiver's delivery of an alert", async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/nodes/': page([NODE]),
      'GET /api/v1/health/nodes/summary/': SUMMARY,
      'GET /api/v1/health/incidents/': page([]),
      'GET /api/v1/health/alerts/': page([ALERT]),
    });
    renderApp('/health');
    const tags = await screen.findByTestId('deliveries-9');
    expect(within(tags).getByText('oncall: sent')).toBeTruthy();
    expect(within(tags).getByText('ops-mail: failed')).toBeTruthy();
  });

  it('refetches alerts, incidents and nodes when the server says a pool changed', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/nodes/': page([NODE]),
      'GET /api/v1/health/nodes/summary/': SUMMARY,
      'GET /api/v1/health/incidents/': page([]),
      'GET /api/v1/health/alerts/': [page([]), page([ALERT])],
    });
    renderApp('/health');
    expect(await screen.findByText('No alerts. All quiet.')).toBeTruthy();
    const sockets = FakeWebSocket.instances.filter((s) => s.url.endsWith('/ws/v1/events/'));
    expect(sockets.length).toBeGreaterThan(0);
    const count = (path: string) => requests.filter((r) => r.path === path).length;
    const before = ['alerts', 'incidents', 'nodes'].map((p) => count(`/api/v1/health/${p}/`));
    act(() => {
      for (const socket of sockets) {
        socket.open();
        socket.receive({ type: 'subscribed', topic: 'pools' });
        socket.receive({ type: 'pools.changed', topic: 'pools', seq: 1, data: { ids: [1] } });
      }
    });
    expect(await screen.findByText('a800-train-003: xid:79')).toBeTruthy();
    ['alerts', 'incidents', 'nodes'].forEach((p, i) => {
      expect(count(`/api/v1/health/${p}/`)).toBeGreaterThan(before[i] ?? 0);
    });
  });

  it('resolves an incident from the node page', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/nodes/3/': { status: 200, body: NODE },
      'GET /api/v1/health/nodes/3/history/': page([]),
      'GET /api/v1/health/incidents/': page([INCIDENT]),
      'POST /api/v1/health/incidents/7/resolve/': {
        status: 200,
        body: { ...INCIDENT, state: 'closed' },
      },
      'GET /api/v1/telemetry/history/': {
        status: 200,
        body: { series: 'node:a800-train-003', resolution_s: 10, points: [] },
      },
    });
    renderApp('/health/nodes/3');
    fireEvent.click(await screen.findByTestId('resolve-7'));
    const popup = popupOf(await screen.findByText(/Repaired\? Close xid:79/));
    fireEvent.click(within(popup).getByRole('button', { name: 'Resolve' }));
    expect(await screen.findByText('xid:79 resolved')).toBeTruthy();
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      '/api/v1/health/incidents/7/resolve/',
    ]);
  });
});
