import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, POOLS, page, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';

const RULE = {
  id: 5,
  code: 'xid:79',
  description: 'GPU fell off the bus',
  severity: 'critical',
  fault_action: 'cordon_drain',
  remediation: '',
  max_remediations: 1,
  substitute_spare: true,
  enabled: true,
  updated_at: '2026-12-01T00:00:00Z',
};
const FM_RULE = {
  ...RULE,
  id: 6,
  code: 'fabricmanager:down',
  description: 'nvidia-fabricmanager not running',
  fault_action: 'remediate',
  remediation: 'restart_fabricmanager',
  max_remediations: 2,
};
const RECEIVER = {
  id: 2,
  name: 'oncall',
  kind: 'webhook',
  target: 'https://hooks.example.com/zs',
  severity: 'critical',
  enabled: true,
};
const TOKEN = {
  id: 11,
  node: 3,
  node_name: 'a800-train-003',
  prefix: 'zsn_ab12',
  created_at: '2026-12-01T00:00:00Z',
  revoked_at: null,
  last_used_at: '2026-12-01T00:05:00Z',
  token: null,
};
const NODE = {
  id: 4,
  name: 'a800-train-004',
  pool: 'a800-train',
  accelerator_model: 'A800',
  accelerator_count: 8,
  health: 'healthy',
  cordoned: false,
  is_spare: false,
  open_incidents: 0,
  checks: [],
};
const RUN = {
  id: 7,
  pool: 1,
  state: 'done',
  runner: 'simulated',
  nodes: 4,
  rounds: [
    {
      purpose: 'screen',
      reference_gbps: 180,
      pairs: [
        ['n0', 'n1', 181.2],
        ['n2', 'n3', 120.4],
      ],
    },
    { purpose: 're-pair', reference_gbps: 180, pairs: [['n2', 'n0', null]] },
  ],
  slow_nodes: ['n2'],
  message: '3 round(s); slow: n2',
  created_at: '2026-12-01T00:00:00Z',
  finished_at: '2026-12-01T00:02:00Z',
};

const written = (requests: { method: string; path: string; body: unknown }[]) =>
  requests.filter((r) => r.method !== 'GET').map((r) => [r.method, r.path, r.body]);

describe('health console sections', () => {
  it('opens a section at its own address and switches by tab', async () => {
    const user = userEvent.setup();
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/rules/': page([RULE]),
      'GET /api/v1/health/receivers/': page([]),
    });
    renderApp('/health/rules');
    const table = await screen.findByTestId('rules-table');
    expect(await within(table).findByText('xid:79')).toBeTruthy();
    expect(within(table).getByText('Cordon and drain')).toBeTruthy();
    await user.click(screen.getByRole('tab', { name: 'Alert receivers' }));
    expect(await screen.findByText('No receivers: alerts reach the inbox only.')).toBeTruthy();
    expect(screen.getByRole('tab', { name: 'Alert receivers' }).getAttribute('aria-selected')).toBe(
      'true',
    );
  });

  it('edits the fault catalogue: toggles, adds a remediating rule, shows the server’s errors', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/rules/': page([RULE, FM_RULE]),
      'PATCH /api/v1/health/rules/5/': { status: 200, body: { ...RULE, enabled: false } },
      'POST /api/v1/health/rules/': [
        { status: 400, body: { detail: 'Invalid input.', errors: { code: ['Already exists.'] } } },
        { status: 201, body: { ...FM_RULE, id: 8, code: 'xid:48' } },
      ],
      'DELETE /api/v1/health/rules/6/': { status: 204 },
    });
    renderApp('/health/rules');
    const table = await screen.findByTestId('rules-table');
    expect(
      await within(table).findByText('Run restart_fabricmanager (up to 2x), else cordon'),
    ).toBeTruthy();
    await user.click(within(table).getByRole('switch', { name: 'Rule for xid:79 enabled' }));

    await user.click(screen.getByRole('button', { name: /New rule/ }));
    const dialog = await screen.findByRole('dialog');
    await user.type(within(dialog).getByLabelText('Fault code'), ' xid:48 ');
    // The agent action is asked for only when the rule remediates.
    expect(within(dialog).queryByLabelText('Agent action')).toBeNull();
    fireEvent.mouseDown(within(dialog).getByRole('combobox', { name: 'Action' }));
    fireEvent.click(await screen.findByTitle('Fix, else cordon'));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByText('Please enter Agent action')).toBeTruthy();
    fireEvent.mouseDown(within(dialog).getByRole('combobox', { name: 'Agent action' }));
    fireEvent.click(await screen.findByTitle('restart_fabricmanager'));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByText('Already exists.')).toBeTruthy();
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => {
      expect(screen.queryByRole('dialog')).toBeNull();
    });

    await user.click(within(table).getByRole('button', { name: 'Delete fabricmanager:down' }));
    await user.click(await screen.findByRole('button', { name: 'Delete' }));
    await screen.findByText('Rule for fabricmanager:down deleted');

    const writes = written(requests);
    expect(writes[0]).toEqual([
      'PATCH',
      '/api/v1/health/rules/5/',
      expect.objectContaining({ code: 'xid:79', enabled: false }),
    ]);
    expect(writes[1]?.[2]).toEqual(
      expect.objectContaining({
        code: 'xid:48',
        fault_action: 'remediate',
        remediation: 'restart_fabricmanager',
        max_remediations: 1,
        severity: 'warning',
      }),
    );
    expect(writes.slice(1).map(([m, p]) => `${String(m)} ${String(p)}`)).toEqual([
      'POST /api/v1/health/rules/',
      'POST /api/v1/health/rules/',
      'DELETE /api/v1/health/rules/6/',
    ]);
  }, 30_000);

  it('adds an email receiver, checking the address before sending', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/receivers/': page([RECEIVER]),
      'POST /api/v1/health/receivers/': {
        status: 201,
        body: { ...RECEIVER, id: 3, name: 'ops-mail', kind: 'email', target: 'ops@example.com' },
      },
    });
    renderApp('/health/receivers');
    const table = await screen.findByTestId('receivers-table');
    expect(await within(table).findByText('https://hooks.example.com/zs')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: /New receiver/ }));
    const dialog = await screen.findByRole('dialog');
    await user.type(within(dialog).getByLabelText('Name'), 'ops-mail');
    fireEvent.mouseDown(within(dialog).getByRole('combobox', { name: 'Kind' }));
    fireEvent.click(await screen.findByTitle('Email'));
    const address = await within(dialog).findByLabelText('Email address');
    await user.type(address, 'not-an-address');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByText(/is not a valid email/)).toBeTruthy();
    expect(written(requests)).toEqual([]);
    await user.clear(address);
    await user.type(address, 'ops@example.com');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await screen.findByText('ops-mail saved');
    expect(written(requests)).toEqual([
      [
        'POST',
        '/api/v1/health/receivers/',
        {
          name: 'ops-mail',
          kind: 'email',
          target: 'ops@example.com',
          severity: 'warning',
          enabled: true,
        },
      ],
    ]);
  }, 20_000);

  it('lists active tokens, mints one shown once and revokes another', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/node-tokens/': page([TOKEN]),
      'GET /api/v1/health/nodes/': page([NODE]),
      'POST /api/v1/health/node-tokens/': {
        status: 201,
        body: { ...TOKEN, id: 12, node: 4, node_name: 'a800-train-004', token: 'zsn_cd34.secret' },
      },
      'DELETE /api/v1/health/node-tokens/11/': { status: 204 },
    });
    renderApp('/health/agents');
    const table = await screen.findByTestId('node-tokens');
    expect(await within(table).findByText('a800-train-003')).toBeTruthy();
    await user.click(screen.getByRole('switch', { name: 'Active only' }));
    await user.type(screen.getByRole('searchbox', { name: 'Node name' }), '003{Enter}');
    await waitFor(() => {
      expect(
        requests.filter((r) => r.path === '/api/v1/health/node-tokens/').map((r) => r.query),
      ).toEqual(['page_size=50&active=true', 'page_size=50', 'page_size=50&node_name=003']);
    });

    await user.click(screen.getByRole('button', { name: /Mint token/ }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.mouseDown(within(dialog).getByRole('combobox', { name: 'Node' }));
    fireEvent.click(await screen.findByTitle('a800-train-004'));
    await user.click(within(dialog).getByRole('button', { name: 'Mint' }));
    expect((await screen.findByTestId('minted-token')).textContent).toContain('zsn_cd34.secret');
    await user.click(screen.getByRole('button', { name: 'Done' }));
    await waitFor(() => {
      expect(screen.queryByTestId('minted-token')).toBeNull();
    });

    await user.click(within(table).getByTestId('revoke-11'));
    await user.click(await screen.findByRole('button', { name: 'Revoke' }));
    await screen.findByText('Token of a800-train-003 revoked');
    expect(written(requests)).toEqual([
      ['POST', '/api/v1/health/node-tokens/', { node: 4 }],
      ['DELETE', '/api/v1/health/node-tokens/11/', undefined],
    ]);
  }, 20_000);

  it('starts a probe run on a pool and shows what each round measured', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/health/probe-runs/': [
        page([RUN]),
        page([{ ...RUN, id: 8, state: 'pending', rounds: [], slow_nodes: [], message: '' }, RUN]),
      ],
      'POST /api/v1/health/probe-runs/': {
        status: 201,
        body: { ...RUN, id: 8, state: 'pending', rounds: [], slow_nodes: [], message: '' },
      },
    });
    renderApp('/health/probes');
    const table = await screen.findByTestId('probe-runs');
    expect(await within(table).findByText('a800-train')).toBeTruthy();
    await user.click(within(table).getByRole('button', { name: /expand row/i }));
    const rounds = await screen.findByTestId('rounds-7');
    expect(within(rounds).getByText('Round 1: screen, reference 180.0 GB/s')).toBeTruthy();
    expect(within(rounds).getByText('67%')).toBeTruthy();
    expect(within(rounds).getByText('failed or timed out')).toBeTruthy();

    await user.click(screen.getByRole('button', { name: /Probe a pool/ }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.mouseDown(within(dialog).getByRole('combobox', { name: 'Pool' }));
    fireEvent.click(await screen.findByTitle('ascend-infer'));
    await user.click(within(dialog).getByRole('button', { name: 'Start' }));
    await screen.findByText('Probe run #8 started');
    expect(await within(table).findByText('Queued')).toBeTruthy();
    expect(written(requests)).toEqual([['POST', '/api/v1/health/probe-runs/', { pool: 2 }]]);
  }, 20_000);
});
