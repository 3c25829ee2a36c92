import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { AdminUser } from '../../lib/apiTypes';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, BOB, page, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';

const USER_BOB: AdminUser = {
  id: 3,
  username: 'bob',
  display_name: 'Bob',
  email: 'bob@vision.example',
  language: 'zh',
  is_platform_admin: false,
  is_active: true,
  date_joined: '2026-11-01T00:00:00Z',
  last_login: null,
  memberships: [{ tenant: 'vision', role: 'member' }],
};
const USER_ADMIN: AdminUser = {
  ...USER_BOB,
  id: 1,
  username: 'admin',
  display_name: 'Platform Admin',
  email: '',
  is_platform_admin: true,
  memberships: [],
};

async function openUsers() {
  renderApp('/settings');
  fireEvent.click(await screen.findByRole('tab', { name: 'Users' }));
  return screen.findByTestId('users-table');
}

describe('settings: users (platform admins)', () => {
  it("lists users with their tenants and rights; an admin's own row cannot deactivate", async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/tokens/': page([]),
      'GET /api/v1/users/': page([USER_ADMIN, USER_BOB]),
    });
    const table = await openUsers();
    await within(table).findByText('bob@vision.example');
    const row = (text: string) => within(table).getByText(text).closest('tr') ?? table;
    const bob = row('bob@vision.example');
    const admin = row('Platform Admin');
    expect(bob.textContent).toContain('vision · Member');
    expect(admin.textContent).toContain('none yet');
    expect(within(admin).queryByRole('button', { name: 'Deactivate' })).toBeNull();
    expect(within(bob).getByRole('button', { name: 'Deactivate' })).toBeTruthy();
    expect(requests.find((r) => r.path === '/api/v1/users/')?.query).toBe('is_active=true');
  });

  it('creates a user, and says a refused field at the field', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/tokens/': page([]),
      'GET /api/v1/users/': page([USER_ADMIN]),
      'POST /api/v1/users/': [
        {
          status: 400,
          body: {
            detail: 'Invalid input.',
            errors: { username: ['A user with that username already exists.'] },
          },
        },
        { status: 201, body: { ...USER_BOB, id: 9, username: 'erin', memberships: [] } },
      ],
    });
    await openUsers();
    fireEvent.click(screen.getByRole('button', { name: /New user/ }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('Username'), { target: { value: ' erin ' } });
    fireEvent.change(within(dialog).getByLabelText('First password'), {
      target: { value: 'a-first-password' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(await within(dialog).findByText('A user with that username already exists.'));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(await screen.findByText('erin created. Add them to a tenant in its Members.'));
    const posts = requests.filter((r) => r.method === 'POST').map((r) => r.body);
    expect(posts).toHaveLength(2);
    expect(posts[1]).toMatchObject({
      username: 'erin',
      password: 'a-first-password',
      is_platform_admin: false,
    });
  });

  it('deactivates a user after asking, and sets a new password for one', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/tokens/': page([]),
      'GET /api/v1/users/': page([USER_BOB]),
      'PATCH /api/v1/users/3/': { status: 200, body: { ...USER_BOB, is_active: false } },
      'POST /api/v1/users/3/password/': { status: 204 },
    });
    const table = await openUsers();
    await within(table).findByText('bob@vision.example');
    fireEvent.click(within(table).getByRole('button', { name: 'Deactivate' }));
    fireEvent.click(
      within(await screen.findByRole('tooltip')).getByRole('button', { name: 'Deactivate' }),
    );
    expect(await screen.findByText('bob deactivated.')).toBeTruthy();
    expect(requests.find((r) => r.method === 'PATCH')?.body).toEqual({ is_active: false });

    fireEvent.click(within(table).getByRole('button', { name: 'Set password' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('New password'), {
      target: { value: 'another-long-password' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Set password' }));
    expect(await screen.findByText('New password set for bob.')).toBeTruthy();
    await waitFor(() => {
      expect(requests.find((r) => r.path === '/api/v1/users/3/password/')?.body).toEqual({
        password: 'another-long-password',
      });
    });
  });

  it('is not offered to anyone but a platform admin', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/tokens/': page([]),
    });
    renderApp('/settings');
    expect(await screen.findByRole('tab', { name: 'Profile' })).toBeTruthy();
    expect(screen.queryByRole('tab', { name: 'Users' })).toBeNull();
  });
});
