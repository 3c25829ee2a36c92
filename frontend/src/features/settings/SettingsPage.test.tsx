import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, BOB, page, sessionOf } from '../../test/fixtures';
import { ALICE, renderApp } from '../../test/renderApp';

const TOKEN = {
  id: 4,
  name: 'ci',
  prefix: 'zs_ab12',
  created_at: '2026-11-30T00:00:00Z',
  expires_at: '2027-02-28T00:00:00Z',
  last_used_at: null,
  revoked_at: null,
  is_active: true,
  read_only: false,
};

describe('settings', () => {
  it('creates a token and shows it once, then revokes one', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/tokens/': [page([]), page([TOKEN])],
      'POST /api/v1/tokens/': { status: 201, body: { ...TOKEN, token: 'zs_ab12.secret-value' } },
      'DELETE /api/v1/tokens/4/': { status: 204 },
    });
    renderApp('/settings');
    expect(await screen.findByText('No tokens.')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'ci' } });
    fireEvent.click(screen.getByRole('button', { name: /Create token/ }));
    const shown = await screen.findByTestId('new-token');
    expect(within(shown).getByTestId('new-token-value').textContent).toBe('zs_ab12.secret-value');
    expect(within(shown).getByText('Copy it now: it is shown only once.')).toBeTruthy();
    expect(requests.find((r) => r.method === 'POST')?.body).toEqual({
      name: 'ci',
      ttl_days: 90,
      read_only: false,
    });

    await screen.findByText('zs_ab12…');
    fireEvent.click(screen.getByRole('button', { name: /Revoke/ }));
    fireEvent.click(
      within(await screen.findByRole('tooltip')).getByRole('button', { name: 'Revoke' }),
    );
    await waitFor(() => {
      expect(requests.filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([
        '/api/v1/tokens/4/',
      ]);
    });
    // Members and the audit log are for admins only.
    expect(screen.queryByRole('tab', { name: 'Members and roles' })).toBeNull();
    expect(screen.queryByRole('tab', { name: 'Audit log' })).toBeNull();
  });

  it('creates a read-only token and marks it in the list', async () => {
    const readOnly = { ...TOKEN, name: 'grafana', read_only: true };
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/tokens/': [page([TOKEN]), page([readOnly, TOKEN])],
      'POST /api/v1/tokens/': { status: 201, body: { ...readOnly, token: 'zs_cd34.secret' } },
    });
    renderApp('/settings');
    const table = await screen.findByTestId('tokens-table');
    await within(table).findByText('ci');
    expect(within(table).queryByTestId('token-read-only')).toBeNull();
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'grafana' } });
    fireEvent.click(screen.getByRole('checkbox', { name: /^Read-only/ }));
    fireEvent.click(screen.getByRole('button', { name: /Create token/ }));
    await screen.findByTestId('new-token');
    expect(requests.find((r) => r.method === 'POST')?.body).toEqual({
      name: 'grafana',
      ttl_days: 90,
      read_only: true,
    });
    await within(table).findByText('grafana');
    const marked = within(table).getAllByTestId('token-read-only');
    expect(marked.map((tag) => tag.closest('tr')?.textContent.includes('grafana'))).toEqual([true]);
  });

  it('lists members for a tenant admin, a page at a time', async () => {
    const member = (id: number, username: string, display_name: string) => ({
      id,
      username,
      display_name,
      role: 'member',
      created_at: '2026-11-30T00:00:00Z',
    });
    const next = 'http://localhost:3000/api/v1/tenants/vision/members/?cursor=m2';
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tokens/': page([]),
      'GET /api/v1/tenants/vision/members/': [
        { status: 200, body: { next, previous: null, results: [member(9, 'bob', 'Bob')] } },
        page([member(1, 'victor', 'Victor')]),
      ],
    });
    renderApp('/settings');
    fireEvent.click(await screen.findByRole('tab', { name: 'Members and roles' }));
    const table = await screen.findByTestId('members-table');
    expect(await within(table).findByText('Bob')).toBeTruthy();
    expect(within(table).getByRole('combobox', { name: 'Role of bob' })).toBeTruthy();
    fireEvent.click(screen.getByTestId('members-page-older'));
    expect(await within(table).findByText('Victor')).toBeTruthy();
    expect(
      requests.filter((r) => r.path === '/api/v1/tenants/vision/members/').map((r) => r.query),
    ).toEqual(['', 'cursor=m2']);
  });

  it("shows a tenant admin the tenant's audit log, filtered, with each change's fields", async () => {
    const ENTRY = {
      id: 31,
      tenant: 'vision',
      actor_name: 'alice',
      action: 'update',
      object_type: 'quotas.quota',
      object_id: '7',
      object_repr: 'vision · a800-train · A800',
      before: { guarantee: 48, borrow_limit: 32 },
      after: { guarantee: 64, borrow_limit: 32 },
      created_at: '2026-12-01T08:00:00Z',
    };
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tokens/': page([]),
      'GET /api/v1/tenants/vision/audit/': page([ENTRY]),
    });
    renderApp('/settings');
    fireEvent.click(await screen.findByRole('tab', { name: 'Audit log' }));
    const table = await screen.findByTestId('audit-table');
    expect(await within(table).findByText('vision · a800-train · A800')).toBeTruthy();
    expect(within(table).queryByRole('columnheader', { name: 'Tenant' })).toBeNull();
    fireEvent.click(within(table).getByRole('button', { name: /expand/i }));
    const changes = await screen.findByTestId('audit-changes-31');
    expect(within(changes).getByText('guarantee')).toBeTruthy();
    expect(within(changes).queryByText('borrow_limit')).toBeNull();

    fireEvent.mouseDown(screen.getByRole('combobox', { name: 'Action' }));
    fireEvent.click(await screen.findByTitle('Deleted'));
    fireEvent.change(screen.getByRole('searchbox', { name: 'Who (username)' }), {
      target: { value: ' bob ' },
    });
    fireEvent.keyDown(screen.getByRole('searchbox', { name: 'Who (username)' }), {
      key: 'Enter',
      code: 'Enter',
      keyCode: 13,
    });
    await waitFor(() => {
      expect(
        requests.filter((r) => r.path === '/api/v1/tenants/vision/audit/').map((r) => r.query),
      ).toEqual([
        'page_size=50',
        'action=delete&page_size=50',
        'action=delete&actor_name=bob&page_size=50',
      ]);
    });
  });

  it("shows a platform admin the whole audit log with each entry's tenant", async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/tokens/': page([]),
      'GET /api/v1/audit/': page([
        {
          id: 2,
          tenant: null,
          actor_name: 'admin',
          action: 'create',
          object_type: 'clusters.cluster',
          object_id: '1',
          object_repr: 'sim-a800',
          before: null,
          after: { name: 'sim-a800' },
          created_at: '2026-12-01T08:00:00Z',
        },
      ]),
    });
    renderApp('/settings');
    fireEvent.click(await screen.findByRole('tab', { name: 'Audit log' }));
    const table = await screen.findByTestId('audit-table');
    expect(await within(table).findByText('sim-a800')).toBeTruthy();
    expect(within(table).getByRole('columnheader', { name: 'Tenant' })).toBeTruthy();
  });
});
