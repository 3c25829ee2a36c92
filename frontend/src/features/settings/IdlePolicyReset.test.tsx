import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { BOB, page, sessionOf } from '../../test/fixtures';
import { ALICE, renderApp } from '../../test/renderApp';
import { DEFAULT_POLICY, GOV } from '../governance/fixtures';

const EFFICIENCY = {
  start: '2026-11-03T00:00:00Z',
  end: '2026-12-03T00:00:00Z',
  reserved_gpu_hours: 0,
  used_gpu_hours: 0,
  unknown_util_gpu_hours: 0,
  utilization_pct: null,
  idle_reclaimed_gpu_hours: 0,
  jobs_stopped_idle: 0,
  jobs_expired_in_queue: 0,
};

function answer(own: Partial<typeof DEFAULT_POLICY>) {
  return {
    status: 200,
    body: {
      effective: { ...DEFAULT_POLICY, webhook_url: '', ...own },
      default: DEFAULT_POLICY,
      customized: Object.keys(own).length > 0,
      overrides: Object.keys(own),
    },
  };
}

describe('settings: idle policy back to the default', () => {
  it('lists the rules the tenant set and resets one, then all', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tokens/': page([]),
      [`GET ${GOV}/efficiency/`]: { status: 200, body: EFFICIENCY },
      [`GET ${GOV}/flags/`]: page([]),
      [`GET ${GOV}/policy/`]: answer({ grace_s: 900, queue_action: 'escalate' }),
      [`PATCH ${GOV}/policy/`]: [answer({ queue_action: 'escalate' }), answer({})],
    });
    renderApp('/settings');
    await user.click(await screen.findByRole('tab', { name: 'Idle GPUs' }));
    const card = await screen.findByTestId('idle-reset');
    const rows = await within(card).findAllByRole('row');
    expect(rows.map((r) => Array.from(r.children, (c) => c.textContent))).toEqual([
      ['Rule', 'This tenant', 'Platform default', ''],
      ['Warning before the stop', '15 min', '30 min', 'Reset'],
      ['Past the queue time limit', 'Tell the owner and admins', 'Expire the job', 'Reset'],
    ]);
    await user.click(
      within(card).getByRole('button', {
        name: 'Reset Warning before the stop to the platform default',
      }),
    );
    expect(await screen.findByText('Back to the platform default.')).toBeTruthy();
    await waitFor(() => {
      expect(within(card).queryByText('Warning before the stop')).toBeNull();
    });
    await user.click(within(card).getByTestId('idle-reset-all'));
    await user.click(
      within(await screen.findByRole('tooltip')).getByRole('button', {
        name: 'Reset all to the platform default',
      }),
    );
    expect(await within(card).findByText('Every rule follows the platform default.')).toBeTruthy();
    expect(requests.filter((r) => r.method === 'PATCH').map((r) => r.body)).toEqual([
      { reset: ['grace_s'] },
      {
        reset: [
          'util_threshold_pct',
          'training_idle_s',
          'notebook_idle_s',
          'grace_s',
          'max_extensions',
          'extension_s',
          'queue_action',
          'max_runtime_s',
        ],
      },
    ]);
  });

  it('is not offered to members', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/tokens/': page([]),
      [`GET ${GOV}/flags/`]: page([]),
      [`GET ${GOV}/policy/`]: answer({ grace_s: 900 }),
    });
    renderApp('/settings');
    await userEvent.setup().click(await screen.findByRole('tab', { name: 'Idle GPUs' }));
    await screen.findByTestId('idle-policy');
    expect(screen.queryByTestId('idle-reset')).toBeNull();
  });
});
