import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { BOB, makeJob, page, POOLS, sessionOf } from '../../test/fixtures';
import { ALICE, renderApp } from '../../test/renderApp';
import { GOV, makeFlag } from '../governance/fixtures';

const JOBS = '/api/v1/tenants/vision/jobs/';
const rowIn = (table: HTMLElement, name: string): HTMLElement => {
  const row = within(table).getByText(name).closest('tr');
  if (!row) throw new Error(`no row for ${name}`);
  return row;
};
const NOTEBOOK = makeJob({
  id: 21,
  name: 'explore',
  kind: 'notebook',
  state: 'running',
  requested_devices: 0,
  requested_milli: 500,
  spec: { notebook: { flavor: 'vscode', storage_gib: 20 } },
});

describe('notebooks', () => {
  it('lists notebooks (kind=notebook) and stops one', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: [page([NOTEBOOK]), page([{ ...NOTEBOOK, state: 'cancelled' }])],
      'POST /api/v1/tenants/vision/jobs/21/cancel/': {
        status: 200,
        body: { ...NOTEBOOK, state: 'cancelled' },
      },
    });
    renderApp('/notebooks');
    const table = await screen.findByTestId('notebooks-table');
    await within(table).findByText('explore');
    const cells = Array.from(
      within(table).getAllByRole('row')[1]?.children ?? [],
      (c) => c.textContent,
    );
    expect(cells.slice(0, 5)).toEqual(['explore', 'VS Code', 'Running', '0.5', 'bob']);
    expect(requests.find((r) => r.path === JOBS)?.query).toBe('kind=notebook&page_size=50');
    fireEvent.click(within(table).getByRole('button', { name: /Stop/ }));
    const confirm = await screen.findByRole('tooltip');
    // The confirmation says the files are kept for a restart (a clone starts empty).
    expect(confirm.textContent).toContain(
      'The files in its home folder are kept until they are deleted or the retention period ends',
    );
    expect(confirm.textContent).toContain('Clone starts with an empty home folder');
    fireEvent.click(within(confirm).getByRole('button', { name: 'Stop' }));
    await waitFor(() => {
      expect(within(table).getByTestId('job-state').getAttribute('data-state')).toBe('cancelled');
    });
  });

  it('opens a running notebook in a new tab through the platform', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: page([
        { ...NOTEBOOK, open_url: '/notebooks/21/' },
        { ...NOTEBOOK, id: 22, name: 'waiting', state: 'queued', open_url: null },
        // Stopped by a live event, before the list's refetch dropped the link.
        { ...NOTEBOOK, id: 23, name: 'stopped', state: 'cancelled', open_url: '/notebooks/23/' },
      ]),
    });
    renderApp('/notebooks');
    const table = await screen.findByTestId('notebooks-table');
    await within(table).findByText('explore');
    const rowOf = (name: string): HTMLElement => {
      const row = within(table).getByText(name).closest('tr');
      if (!row) throw new Error(`no row for ${name}`);
      return row;
    };
    const open = within(rowOf('explore')).getByRole('link', { name: /Open/ });
    expect(open.getAttribute('href')).toBe('/notebooks/21/');
    expect(open.getAttribute('target')).toBe('_blank');
    expect(open.getAttribute('rel')).toContain('noopener');
    expect(open.getAttribute('data-testid')).toBe('notebook-open');
    expect(within(rowOf('waiting')).queryByRole('link', { name: /Open/ })).toBeNull();
    expect(within(rowOf('stopped')).queryByRole('link', { name: /Open/ })).toBeNull();
    expect(within(table).getAllByTestId('notebook-open')).toHaveLength(1);
  });

  it('creates a notebook with a fractional GPU share', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: page([]),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      [`POST ${JOBS}`]: { status: 201, body: NOTEBOOK },
    });
    renderApp('/notebooks');
    expect(await screen.findByText('No notebooks yet.')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: /New notebook/ }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('Job name'), { target: { value: 'explore' } });
    fireEvent.click(within(dialog).getByLabelText('VS Code'));
    fireEvent.mouseDown(within(dialog).getByRole('combobox', { name: 'Resource pool' }));
    fireEvent.click(await screen.findByTitle('a800-train'));
    await waitFor(() => {
      fireEvent.mouseDown(within(dialog).getByRole('combobox', { name: 'Accelerator model' }));
      expect(screen.getByTitle('A800')).toBeTruthy();
    });
    fireEvent.click(screen.getByTitle('A800'));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Launch' }));
    await waitFor(() => {
      expect(requests.find((r) => r.method === 'POST')?.body).toEqual({
        kind: 'notebook',
        name: 'explore',
        image: 'codercom/code-server:latest',
        pool: 1,
        accelerator_model: 'A800',
        priority: 4,
        max_retries: 0,
        notebook: { flavor: 'vscode', storage_gib: 20 },
        replica_groups: [
          {
            name: 'notebook',
            replicas: 1,
            accelerators: 0,
            accelerator_milli: 500,
            cpu_milli: 4000,
            memory_mib: 32768,
            rdma_nics: 0,
          },
        ],
      });
    });
  });

  it("offers Stop only on the member's own notebooks; admins may stop any", async () => {
    const jobs = page([
      { ...NOTEBOOK, open_url: '/notebooks/21/' },
      { ...NOTEBOOK, id: 23, name: 'alices', owner: 'alice', open_url: null },
    ]);
    stubFetch({ 'GET /api/v1/auth/session/': sessionOf(BOB), [`GET ${JOBS}`]: jobs });
    const view = renderApp('/notebooks');
    const table = await screen.findByTestId('notebooks-table');
    await within(table).findByText('alices');
    const rowOf = (name: string): HTMLElement => {
      const row = within(table).getByText(name).closest('tr');
      if (!row) throw new Error(`no row for ${name}`);
      return row;
    };
    expect(within(rowOf('explore')).queryByRole('button', { name: /Stop/ })).not.toBeNull();
    // The server refuses a member who stops someone else's notebook (403): no button.
    expect(within(rowOf('alices')).queryByRole('button', { name: /Stop/ })).toBeNull();
    view.unmount();

    const alice = {
      ...BOB,
      user: { ...BOB.user, id: 2, username: 'alice' },
      memberships: [
        { tenant: { id: 1, slug: 'vision', name: 'Vision Lab' }, role: 'tenant_admin' as const },
      ],
    };
    stubFetch({ 'GET /api/v1/auth/session/': sessionOf(alice), [`GET ${JOBS}`]: jobs });
    renderApp('/notebooks');
    const adminTable = await screen.findByTestId('notebooks-table');
    await within(adminTable).findByText('alices');
    expect(within(adminTable).getAllByRole('button', { name: /Stop/ })).toHaveLength(2);
  });

  it('refuses an empty or fractional workspace volume before sending', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: page([]),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      [`POST ${JOBS}`]: { status: 201, body: NOTEBOOK },
    });
    renderApp('/notebooks');
    fireEvent.click(await screen.findByRole('button', { name: /New notebook/ }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('Job name'), { target: { value: 'explore' } });
    fireEvent.mouseDown(within(dialog).getByRole('combobox', { name: 'Resource pool' }));
    fireEvent.click(await screen.findByTitle('a800-train'));
    await waitFor(() => {
      fireEvent.mouseDown(within(dialog).getByRole('combobox', { name: 'Accelerator model' }));
      expect(screen.getByTitle('A800')).toBeTruthy();
    });
    fireEvent.click(screen.getByTitle('A800'));
    const storage = within(dialog).getByLabelText('Workspace volume');
    for (const value of ['', '1.5']) {
      fireEvent.change(storage, { target: { value } });
      fireEvent.click(within(dialog).getByRole('button', { name: 'Launch' }));
      expect(
        await within(dialog).findByText('A whole number of GiB, from 1 to 2048.'),
      ).toBeTruthy();
    }
    expect(requests.filter((r) => r.method === 'POST')).toHaveLength(0);
  });

  it('says why a queued notebook waits (over quota), with the detail on hover', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: page([
        {
          ...NOTEBOOK,
          state: 'queued',
          pending_code: 'quota',
          pending_message: "quota: tenant 'vision' would use 85.75 A800, over its limit of 80",
        },
      ]),
    });
    renderApp('/notebooks');
    const table = await screen.findByTestId('notebooks-table');
    const tag = await within(table).findByTestId('pending-code');
    expect(tag.textContent).toBe('Quota');
    fireEvent.mouseEnter(tag);
    expect((await screen.findByRole('tooltip')).textContent).toContain('over its limit of 80');
  });

  it('marks a notebook whose idle GPUs are about to be stopped, linking to its page', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: page([NOTEBOOK, { ...NOTEBOOK, id: 22, name: 'busy' }]),
      [`GET ${GOV}/flags/`]: page([makeFlag({ job: 21, stop_at: '2026-12-03T10:30:00Z' })]),
    });
    renderApp('/notebooks');
    const table = await screen.findByTestId('notebooks-table');
    const idle = await within(table).findByTestId('idle-stop');
    expect(idle.closest('tr')?.textContent).toContain('explore');
    expect(idle.getAttribute('href')).toBe('/jobs/21');
    expect(idle.textContent).toMatch(/^GPUs idle: stops /);
    expect(within(table).getAllByTestId('idle-stop')).toHaveLength(1);
    // One request for the page's pending stops, not one per notebook.
    const flagRequests = requests.filter((r) => r.path === `${GOV}/flags/`);
    expect(flagRequests).toHaveLength(1);
    expect(flagRequests[0]?.query).toBe('state=warned&state=extended&page_size=500');
  });
});

describe('notebook files', () => {
  const STOPPED = {
    ...NOTEBOOK,
    id: 24,
    name: 'stopped',
    state: 'cancelled' as const,
    home_job: 24,
  };
  const LIST = [
    { ...NOTEBOOK, home_job: 21 },
    STOPPED,
    { ...STOPPED, id: 25, name: 'done', state: 'succeeded' as const, home_job: 25 },
    {
      ...STOPPED,
      id: 26,
      name: 'wiped',
      state: 'failed' as const,
      home_job: 26,
      home_deleted_at: '2026-12-01T00:00:00Z',
    },
    { ...STOPPED, id: 27, name: 'alices', owner: 'alice', home_job: 27 },
  ];
  const buttons = (row: HTMLElement) =>
    within(row)
      .queryAllByRole('button')
      .map((b) => b.textContent);

  it('offers Restart and Delete files on ended notebooks that keep their files', async () => {
    stubFetch({ 'GET /api/v1/auth/session/': sessionOf(BOB), [`GET ${JOBS}`]: page(LIST) });
    const view = renderApp('/notebooks');
    const table = await screen.findByTestId('notebooks-table');
    await within(table).findByText('alices');
    expect(buttons(rowIn(table, 'explore'))).toEqual(['Stop']);
    expect(buttons(rowIn(table, 'stopped'))).toEqual(['Restart', 'Delete files']);
    expect(buttons(rowIn(table, 'done'))).toEqual(['Restart', 'Delete files']);
    // Its files are gone: nothing to restart with, and a tag says so.
    expect(buttons(rowIn(table, 'wiped'))).toEqual([]);
    expect(within(rowIn(table, 'wiped')).getByTestId('files-deleted').textContent).toBe(
      'Files deleted',
    );
    expect(within(table).getAllByTestId('files-deleted')).toHaveLength(1);
    // Another member's notebook: the server says 403, so no buttons.
    expect(buttons(rowIn(table, 'alices'))).toEqual([]);
    view.unmount();

    // A tenant admin may restart any member's notebook.
    stubFetch({ 'GET /api/v1/auth/session/': sessionOf(ALICE), [`GET ${JOBS}`]: page(LIST) });
    renderApp('/notebooks');
    const adminTable = await screen.findByTestId('notebooks-table');
    await within(adminTable).findByText('alices');
    expect(buttons(rowIn(adminTable, 'alices'))).toEqual(['Restart', 'Delete files']);
    expect(within(adminTable).getAllByRole('button', { name: /Restart/ })).toHaveLength(3);
  });

  it('offers neither while a restart of the same files is active', async () => {
    const RESTARTED = {
      ...NOTEBOOK,
      id: 28,
      name: 'again',
      state: 'running' as const,
      home_job: 24,
    };
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: page([
        RESTARTED,
        STOPPED,
        { ...STOPPED, id: 25, name: 'done', home_job: 25 },
      ]),
    });
    renderApp('/notebooks');
    const table = await screen.findByTestId('notebooks-table');
    await within(table).findByText('done');
    expect(buttons(rowIn(table, 'stopped'))).toEqual([]); // #28 mounts its files now
    expect(within(rowIn(table, 'stopped')).getByTestId('files-in-use').textContent).toBe(
      'Files in use by #28',
    );
    expect(buttons(rowIn(table, 'done'))).toEqual(['Restart', 'Delete files']);
  });

  it('restarts a stopped notebook with its files and names the new one', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: page([STOPPED]),
      [`POST ${JOBS}24/restart/`]: {
        status: 201,
        body: { ...STOPPED, id: 30, state: 'queued' },
      },
    });
    renderApp('/notebooks');
    const table = await screen.findByTestId('notebooks-table');
    fireEvent.click(await within(table).findByRole('button', { name: /Restart/ }));
    expect(await screen.findByText('Restarted as notebook #30')).toBeTruthy();
    expect(requests.filter((r) => r.method === 'POST').map((r) => [r.path, r.body])).toEqual([
      [`${JOBS}24/restart/`, undefined],
    ]);
  });

  it("shows the server's reason when a restart is refused", async () => {
    const BUSY = 'Notebook #30 still uses these files: stop it first.';
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: page([STOPPED]),
      [`POST ${JOBS}24/restart/`]: { status: 409, body: { detail: BUSY } },
    });
    renderApp('/notebooks');
    const table = await screen.findByTestId('notebooks-table');
    fireEvent.click(await within(table).findByRole('button', { name: /Restart/ }));
    expect(await screen.findByText(BUSY)).toBeTruthy();
  });

  it('asks before deleting the files, then marks them deleted', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: [
        page([STOPPED]),
        page([{ ...STOPPED, home_deleted_at: '2026-12-02T00:00:00Z' }]),
      ],
      [`POST ${JOBS}24/delete-home/`]: {
        status: 200,
        body: { ...STOPPED, home_deleted_at: '2026-12-02T00:00:00Z' },
      },
    });
    renderApp('/notebooks');
    const table = await screen.findByTestId('notebooks-table');
    fireEvent.click(await within(table).findByRole('button', { name: /Delete files/ }));
    const confirm = await screen.findByRole('tooltip');
    expect(within(confirm).getByText('Delete the files of stopped?')).toBeTruthy();
    expect(confirm.textContent).toContain('deleted for good');
    expect(confirm.textContent).toContain('can no longer be restarted with them');
    expect(requests.filter((r) => r.method === 'POST')).toEqual([]);
    fireEvent.click(within(confirm).getByRole('button', { name: 'Delete files' }));
    expect(await within(table).findByTestId('files-deleted')).toBeTruthy();
    expect(within(table).queryByRole('button', { name: /Restart/ })).toBeNull();
    expect(within(table).queryByRole('button', { name: /Delete files/ })).toBeNull();
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      `${JOBS}24/delete-home/`,
    ]);
  });
});
