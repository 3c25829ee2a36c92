import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { page, sessionOf } from '../../test/fixtures';
import { ALICE, renderApp } from '../../test/renderApp';

const MEMBERS = '/api/v1/tenants/vision/members/';
const member = (id: number, username: string, role: string) => ({
  id,
  username,
  display_name: username.toUpperCase(),
  role,
  created_at: '2026-11-30T00:00:00Z',
});
const ME = member(1, 'alice', 'tenant_admin');
const BOBBY = member(2, 'bob', 'member');

/** `value`, failing the test when it is missing. */
function present<T>(value: T | null | undefined): T {
  if (value === null || value === undefined) throw new Error('expected an element');
  return value;
}

async function openMembers() {
  renderApp('/settings');
  fireEvent.click(await screen.findByRole('tab', { name: 'Members and roles' }));
  const table = await screen.findByTestId('members-table');
  await within(table).findByText('BOB');
  return table;
}

describe('settings: members', () => {
  it('adds a member once even when submitted again while adding, trimming the name', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tokens/': page([]),
      [`GET ${MEMBERS}`]: page([ME, BOBBY]),
      [`POST ${MEMBERS}`]: { status: 201, body: member(3, 'carol', 'member') },
    });
    await openMembers();
    // A server that takes a moment to answer, as a real one does: both clicks land first.
    const answer = globalThis.fetch;
    vi.stubGlobal('fetch', async (...args: Parameters<typeof fetch>) => {
      const response = await answer(...args);
      await new Promise((resolve) => setTimeout(resolve, 200));
      return response;
    });
    fireEvent.change(screen.getByLabelText('Username'), { target: { value: ' carol ' } });
    const posts = () => requests.filter((r) => r.method === 'POST' && r.path === MEMBERS);
    // A second submit while the first is on its way (a double click, or Enter then a click:
    // the form submits on Enter whatever the button shows) sends nothing more.
    const form = screen.getByRole('button', { name: /Add member/ }).closest('form');
    const submit = () =>
      form?.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    submit();
    await waitFor(() => {
      expect(posts()).toHaveLength(1);
    });
    submit();
    expect(await screen.findByText('carol added.')).toBeTruthy();
    expect(posts().map((r) => r.body)).toEqual([{ username: 'carol', role: 'member' }]);
    expect(screen.queryByText(/already a member/)).toBeNull();
  });

  it('asks before changing your own role, not before changing another', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tokens/': page([]),
      [`GET ${MEMBERS}`]: page([ME, BOBBY]),
      [`PATCH ${MEMBERS}2/`]: { status: 200, body: { ...BOBBY, role: 'viewer' } },
      [`PATCH ${MEMBERS}1/`]: {
        status: 409,
        body: { detail: 'alice is the only tenant admin of vision and cannot be made viewer.' },
      },
    });
    await openMembers();
    const patches = () => requests.filter((r) => r.method === 'PATCH');

    await user.click(screen.getByRole('combobox', { name: 'Role of bob' }));
    await user.click(await screen.findByTitle('Viewer'));
    expect(await screen.findByText('bob is now Viewer.')).toBeTruthy();
    expect(patches().map((r) => [r.path, r.body])).toEqual([[`${MEMBERS}2/`, { role: 'viewer' }]]);

    await user.click(screen.getByRole('combobox', { name: 'Role of alice' }));
    const options = await screen.findAllByTitle('Viewer');
    await user.click(present(options.at(-1)));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getAllByText('Change your own role to Viewer?').length).toBeGreaterThan(
      0,
    );
    await user.click(within(dialog).getByRole('button', { name: 'No' }));
    expect(patches()).toHaveLength(1);

    await user.click(screen.getByRole('combobox', { name: 'Role of alice' }));
    await user.click(present((await screen.findAllByTitle('Viewer')).at(-1)));
    await user.click(
      within(await screen.findByRole('dialog')).getByRole('button', { name: 'Change my role' }),
    );
    // The server keeps the last tenant admin: its 409 is said as it is.
    expect(await screen.findByText(/only tenant admin of vision/)).toBeTruthy();
    expect(patches().map((r) => r.path)).toEqual([`${MEMBERS}2/`, `${MEMBERS}1/`]);
  });

  it('says what removal means for running jobs and tokens, and asks you about yourself', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tokens/': page([]),
      [`GET ${MEMBERS}`]: page([ME, BOBBY]),
      [`DELETE ${MEMBERS}2/`]: { status: 204 },
    });
    const table = await openMembers();
    const rows = within(table).getAllByRole('row');
    await user.click(within(present(rows[1])).getByRole('button', { name: 'Remove' }));
    expect(
      await screen.findByText('Remove yourself from this tenant? You lose access to it at once.'),
    ).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'No' }));
    await user.click(within(present(rows[2])).getByRole('button', { name: 'Remove' }));
    const tip = await screen.findByText('Remove bob from this tenant?');
    const popup = present(tip.closest<HTMLElement>('.ant-popover'));
    expect(within(popup).getByText(/running jobs keep running and are billed/)).toBeTruthy();
    expect(within(popup).getByText(/API tokens stop working for this tenant/)).toBeTruthy();
    await user.click(within(popup).getByRole('button', { name: 'Remove' }));
    expect(await screen.findByText('bob removed.')).toBeTruthy();
    await waitFor(() => {
      expect(requests.filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([
        `${MEMBERS}2/`,
      ]);
    });
  });
});
