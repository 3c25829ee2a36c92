import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { BOB, makeJob, page, POOLS, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';
import { GOV, makeFlag } from '../governance/fixtures';

const JOBS = '/api/v1/tenants/vision/jobs/';
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
    // The confirmation says what a stop means for the workspace volume (no restart).
    expect(confirm.textContent).toContain('cannot be started again');
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
