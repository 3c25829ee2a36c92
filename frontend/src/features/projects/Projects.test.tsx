import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { BOB, page, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';

const PROJECTS = '/api/v1/tenants/vision/projects/';
const project = (id: number, name: string, description = '') => ({
  id,
  name,
  description,
  created_by: 'bob',
  created_at: '2026-11-30T00:00:00Z',
});

describe('settings: projects', () => {
  it('lists, creates, renames and deletes projects', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/tokens/': page([]),
      [`GET ${PROJECTS}`]: [
        page([project(2, 'zeta'), project(1, 'alpha', 'first')]),
        page([project(2, 'zeta'), project(1, 'alpha', 'first'), project(3, 'detr')]),
        page([project(2, 'zeta'), project(1, 'alpha-v2', 'first'), project(3, 'detr')]),
        page([project(1, 'alpha-v2', 'first'), project(3, 'detr')]),
      ],
      [`POST ${PROJECTS}`]: [
        {
          status: 400,
          body: { detail: 'Invalid input.', errors: { name: ['A project named zeta exists.'] } },
        },
        { status: 201, body: project(3, 'detr') },
      ],
      [`PATCH ${PROJECTS}1/`]: { status: 200, body: project(1, 'alpha-v2', 'first') },
      [`DELETE ${PROJECTS}2/`]: { status: 204 },
    });
    renderApp('/settings');
    await user.click(await screen.findByRole('tab', { name: 'Projects' }));
    const table = await screen.findByTestId('projects-table');
    const names = () =>
      within(table)
        .getAllByRole('row')
        .slice(1)
        .map((r) => r.querySelector('td')?.textContent);
    await waitFor(() => {
      expect(names()).toEqual(['alpha', 'zeta']); // by name
    });
    expect(
      new URLSearchParams(requests.find((r) => r.path === PROJECTS)?.query).get('page_size'),
    ).toBe('500');

    // Create: a clash is shown on the name field, then the new project is listed.
    await user.click(screen.getByRole('button', { name: /New project/ }));
    let dialog = await screen.findByRole('dialog');
    await user.type(within(dialog).getByLabelText('Name'), 'zeta');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByText('A project named zeta exists.')).toBeTruthy();
    await user.clear(within(dialog).getByLabelText('Name'));
    await user.type(within(dialog).getByLabelText('Name'), ' detr ');
    // A double click creates it once (a second POST would be refused: the name is taken).
    await user.dblClick(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => {
      expect(names()).toEqual(['alpha', 'detr', 'zeta']);
    });
    const posts = requests.filter((r) => r.method === 'POST').map((r) => r.body);
    expect(posts).toEqual([
      { name: 'zeta', description: '' },
      { name: 'detr', description: '' },
    ]);

    // Rename.
    await user.click(within(table).getByRole('button', { name: 'Edit alpha' }));
    dialog = await screen.findByRole('dialog', { hidden: false });
    const name = within(dialog).getByLabelText('Name');
    expect((name as HTMLInputElement).value).toBe('alpha');
    await user.clear(name);
    await user.type(name, 'alpha-v2');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => {
      expect(names()).toEqual(['alpha-v2', 'detr', 'zeta']);
    });
    expect(requests.find((r) => r.method === 'PATCH')?.body).toEqual({
      name: 'alpha-v2',
      description: 'first',
    });

    // Delete, after confirming.
    await user.click(within(table).getByRole('button', { name: 'Delete zeta' }));
    await user.click(await screen.findByRole('button', { name: 'Delete' }));
    await waitFor(() => {
      expect(names()).toEqual(['alpha-v2', 'detr']);
    });
    expect(requests.some((r) => r.method === 'DELETE' && r.path === `${PROJECTS}2/`)).toBe(true);
  }, 20_000);

  it('shows a viewer the projects without the buttons', async () => {
    const user = userEvent.setup();
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf({
        ...BOB,
        memberships: [{ tenant: { id: 1, slug: 'vision', name: 'Vision Lab' }, role: 'viewer' }],
      }),
      'GET /api/v1/tokens/': page([]),
      [`GET ${PROJECTS}`]: page([project(1, 'alpha')]),
    });
    renderApp('/settings');
    await user.click(await screen.findByRole('tab', { name: 'Projects' }));
    const table = await screen.findByTestId('projects-table');
    expect(await within(table).findByText('alpha')).toBeTruthy();
    expect(screen.queryByRole('button', { name: /New project/ })).toBeNull();
    expect(within(table).queryByRole('button')).toBeNull();
  });
});
