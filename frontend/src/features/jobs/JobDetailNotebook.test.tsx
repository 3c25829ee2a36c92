import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Job, Session } from '../../lib/apiTypes';
import { stubFetch } from '../../test/fetchStub';
import { BOB, makeJob, page, POOLS, sessionOf } from '../../test/fixtures';
import { ALICE, renderApp } from '../../test/renderApp';

const JOBS = '/api/v1/tenants/vision/jobs/';
// A restart of notebook #12: it mounts #12's home volume.
const STOPPED = makeJob({
  id: 31,
  name: 'explore',
  kind: 'notebook',
  state: 'cancelled',
  requested_devices: 0,
  requested_milli: 500,
  home_job: 12,
});

/** What a notebook's page asks for, with `job` as the answer for notebook #31. */
function notebookRoutes(session: Session, job: Job | Job[]) {
  return {
    'GET /api/v1/auth/session/': sessionOf(session),
    'GET /api/v1/pools/': { status: 200, body: POOLS },
    'GET /api/v1/tenants/vision/projects/': page([]),
    'GET /api/v1/tenants/vision/runs/': page([]),
    [`GET ${JOBS}31/`]: Array.isArray(job)
      ? job.map((body) => ({ status: 200, body }))
      : { status: 200, body: job },
    [`GET ${JOBS}31/events/`]: { status: 200, body: [] },
    [`GET ${JOBS}31/logs/`]: {
      status: 200,
      body: { source: 'kubernetes', lines: [], truncated: false },
    },
  };
}

describe("a notebook's page: its files", () => {
  it('links a restarted notebook to the first one, whose files it mounts', async () => {
    stubFetch(notebookRoutes(BOB, STOPPED));
    renderApp('/jobs/31');
    const home = await screen.findByTestId('home-volume');
    const link = within(home).getByRole('link');
    expect(link.textContent).toBe('#12');
    expect(link.getAttribute('href')).toBe('/jobs/12');
    expect(home.textContent).toBe('#12');
    expect(screen.getByRole('button', { name: /Restart/ })).toBeTruthy();
    expect(screen.getByRole('button', { name: /Delete files/ })).toBeTruthy();
    // Clone stays: a copy with a new, empty home volume.
    expect(screen.getByRole('button', { name: /Clone/ })).toBeTruthy();
  });

  it('says when the files were deleted, and offers no restart then', async () => {
    stubFetch(
      notebookRoutes(BOB, { ...STOPPED, home_job: 31, home_deleted_at: '2026-12-02T08:00:00Z' }),
    );
    renderApp('/jobs/31');
    const home = await screen.findByTestId('home-volume');
    expect(within(home).queryByRole('link')).toBeNull();
    expect(home.textContent).toMatch(/^Its own \(deleted .*2026.*\)$/);
    expect(screen.queryByRole('button', { name: /Restart/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /Delete files/ })).toBeNull();
  });

  it('offers Restart and Delete files to the owner and admins, not to others', async () => {
    const other = { ...STOPPED, owner: 'alice' };
    stubFetch(notebookRoutes(BOB, other));
    const view = renderApp('/jobs/31');
    await screen.findByTestId('home-volume');
    expect(screen.queryByRole('button', { name: /Restart/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /Delete files/ })).toBeNull();
    view.unmount();

    stubFetch(notebookRoutes(ALICE, { ...other, owner: 'bob' }));
    renderApp('/jobs/31');
    expect(await screen.findByRole('button', { name: /Restart/ })).toBeTruthy();
    expect(screen.getByRole('button', { name: /Delete files/ })).toBeTruthy();
  });

  it('offers neither while the notebook runs, nor for other kinds of job', async () => {
    stubFetch(notebookRoutes(BOB, { ...STOPPED, state: 'queued' }));
    const view = renderApp('/jobs/31');
    await screen.findByTestId('home-volume');
    expect(screen.getByRole('button', { name: /Cancel job/ })).toBeTruthy();
    expect(screen.queryByRole('button', { name: /Restart/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /Delete files/ })).toBeNull();
    view.unmount();

    stubFetch(notebookRoutes(BOB, { ...STOPPED, kind: 'training', home_job: null }));
    renderApp('/jobs/31');
    await screen.findByTestId('job-summary');
    expect(screen.queryByTestId('home-volume')).toBeNull();
    expect(screen.queryByRole('button', { name: /Restart/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /Delete files/ })).toBeNull();
  });

  it('restarts the notebook and opens the new one', async () => {
    const restarted = { ...STOPPED, id: 40, state: 'queued' as const };
    const { requests } = stubFetch({
      ...notebookRoutes(BOB, STOPPED),
      [`POST ${JOBS}31/restart/`]: { status: 201, body: restarted },
      [`GET ${JOBS}40/`]: { status: 200, body: restarted },
      [`GET ${JOBS}40/events/`]: { status: 200, body: [] },
      [`GET ${JOBS}40/logs/`]: {
        status: 200,
        body: { source: 'kubernetes', lines: [], truncated: false },
      },
    });
    const { router } = renderApp('/jobs/31');
    fireEvent.click(await screen.findByRole('button', { name: /Restart/ }));
    expect(await screen.findByText('Restarted as notebook #40')).toBeTruthy();
    await waitFor(() => {
      expect(router.state.location.pathname).toBe('/jobs/40');
    });
    expect(requests.filter((r) => r.method === 'POST').map((r) => [r.path, r.body])).toEqual([
      [`${JOBS}31/restart/`, undefined],
    ]);
  });

  it("asks before deleting the files and shows the server's refusal", async () => {
    const ACTIVE = 'Notebook #40 still uses these files: stop it first.';
    const { requests } = stubFetch({
      ...notebookRoutes(BOB, STOPPED),
      [`POST ${JOBS}31/delete-home/`]: { status: 409, body: { detail: ACTIVE } },
    });
    renderApp('/jobs/31');
    fireEvent.click(await screen.findByRole('button', { name: /Delete files/ }));
    const confirm = await screen.findByRole('tooltip');
    expect(confirm.textContent).toContain('deleted for good');
    expect(requests.filter((r) => r.method === 'POST')).toEqual([]);
    fireEvent.click(within(confirm).getByRole('button', { name: 'Delete files' }));
    expect(await screen.findByText(ACTIVE)).toBeTruthy();
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      `${JOBS}31/delete-home/`,
    ]);
  });

  it('deletes the files: the page then says when', async () => {
    const deleted = { ...STOPPED, home_deleted_at: '2026-12-02T08:00:00Z' };
    stubFetch({
      ...notebookRoutes(BOB, [STOPPED, deleted]),
      [`POST ${JOBS}31/delete-home/`]: { status: 200, body: deleted },
    });
    renderApp('/jobs/31');
    fireEvent.click(await screen.findByRole('button', { name: /Delete files/ }));
    const confirm = await screen.findByRole('tooltip');
    fireEvent.click(within(confirm).getByRole('button', { name: 'Delete files' }));
    await waitFor(() => {
      expect(screen.getByTestId('home-volume').textContent).toMatch(/^#12 \(deleted .+\)$/);
    });
    expect(screen.queryByRole('button', { name: /Restart/ })).toBeNull();
  });
});
