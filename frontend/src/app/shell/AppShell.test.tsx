import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, BOB, sessionOf } from '../../test/fixtures';
import { ALICE, renderApp } from '../../test/renderApp';
import { ComingSoonPage } from '../ComingSoonPage';

const SESSION = { status: 200, body: ALICE, setCookie: 'csrftoken=tok123; path=/' };
const OVERVIEW = {
  tenants: 1,
  clusters: 1,
  pools: 1,
  nodes: 2,
  gpus: 16,
  spare_gpus: 0,
  gpus_by_model: [{ model: 'A100-SXM4-80GB', vendor: 'nvidia', count: 16 }],
  jobs_running: 0,
  jobs_pending: 0,
};

describe('app shell', () => {
  it('switches every string to Chinese with the language switch and remembers it', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': SESSION,
      'GET /api/v1/overview/': { status: 200, body: OVERVIEW },
    });
    renderApp('/overview');
    await screen.findByTestId('stat-gpus');
    expect(screen.getByRole('heading', { name: 'Overview' })).toBeTruthy();

    await userEvent.setup({ delay: null }).click(screen.getByText('中文'));

    await waitFor(() => {
      expect(screen.getByRole('heading', { name: '概览' })).toBeTruthy();
    });
    const nav = screen.getByRole('navigation', { name: '主导航' });
    expect(
      within(nav)
        .getAllByRole('link')
        .map((link) => link.textContent),
    ).toEqual([
      '概览',
      '集群',
      '作业',
      '开发环境',
      '推理服务',
      '实验',
      '超参搜索',
      '配额与资源池',
      '用量与费用',
      '设置',
    ]);
    expect(screen.getByText('运行中作业')).toBeTruthy();
    expect(screen.getByText('刷新').closest('button')).not.toBeNull();
    expect(window.localStorage.getItem('zhisuan.language')).toBe('zh');
    expect(document.documentElement.lang).toBe('zh-CN');
    // The server's own pages (the notebook proxy's messages) follow the same choice.
    expect(document.cookie).toContain('zs_lang=zh');
  });

  it('offers each role only the areas it may use', async () => {
    const links = async () =>
      within(await screen.findByRole('navigation', { name: 'Main navigation' }))
        .getAllByRole('link')
        .map((link) => link.textContent);
    const everyone = ['Overview', 'Cluster', 'Quotas & Pools', 'Settings'];
    const tenantWork = ['Jobs', 'Notebooks', 'Inference', 'Experiments', 'Sweeps'];
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/overview/': { status: 200, body: OVERVIEW },
    });
    const member = renderApp('/overview');
    expect((await links()).sort()).toEqual([...everyone, ...tenantWork].sort());
    member.unmount();
    cleanup();
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/overview/': { status: 200, body: OVERVIEW },
    });
    renderApp('/overview');
    // A platform admin without a tenant: the operator's areas, no tenant's work.
    expect((await links()).sort()).toEqual(
      [...everyone, 'What-if', 'Health', 'Usage & Cost'].sort(),
    );
  });

  it('shows a coming-soon page for areas not built yet', async () => {
    // Every area in the menu is built now; the placeholder stays for the next one.
    const router = createMemoryRouter(
      [
        { path: '/soon', element: <ComingSoonPage area="experiments" /> },
        { path: '/overview', element: <div>overview</div> },
      ],
      { initialEntries: ['/soon'] },
    );
    render(<RouterProvider router={router} />);

    expect((await screen.findByText('Experiments is coming soon')).tagName).toBe('DIV');
    fireEvent.click(screen.getByRole('button', { name: 'Back to overview' }));
    await waitFor(() => {
      expect(router.state.location.pathname).toBe('/overview');
    });
  });

  it('logs out and returns to the login page', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': SESSION,
      'GET /api/v1/overview/': { status: 200, body: OVERVIEW },
      'POST /api/v1/auth/logout/': { status: 204 },
    });
    const { router } = renderApp('/overview');
    const user = userEvent.setup({ delay: null });

    await user.click(await screen.findByTestId('user-menu'));
    await user.click(await screen.findByText('Log out'));

    await waitFor(() => {
      expect(router.state.location.pathname).toBe('/login');
    });
    const logout = requests.find((r) => r.path === '/api/v1/auth/logout/');
    expect(logout?.headers.get('X-CSRFToken')).toBe('tok123');
  });
});

describe('tenant switcher', () => {
  it('shows the remembered tenant and switches to another membership', async () => {
    window.localStorage.setItem('zhisuan.tenant', 'nlp');
    stubFetch({ 'GET /api/v1/auth/session/': SESSION });
    renderApp('/jobs');
    const user = userEvent.setup({ delay: null });

    const switcher = await screen.findByTestId('tenant-switcher');
    expect(switcher.querySelector('.ant-select-content')?.textContent).toBe('NLP GroupMember');

    await user.click(within(switcher).getByRole('combobox'));
    await user.click(await screen.findByText('Vision Lab'));

    await waitFor(() => {
      expect(window.localStorage.getItem('zhisuan.tenant')).toBe('vision');
    });
    expect(switcher.querySelector('.ant-select-content')?.textContent).toBe(
      'Vision LabTenant admin',
    );
  });

  it('shows the platform badge to a platform admin without memberships', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': {
        status: 200,
        body: {
          user: {
            id: 1,
            username: 'admin',
            display_name: 'Platform Admin',
            is_platform_admin: true,
          },
          memberships: [],
        },
      },
    });
    renderApp('/jobs');

    expect((await screen.findByTestId('tenant-platform')).textContent).toBe('Platform admin');
    expect(screen.queryByTestId('tenant-switcher')).toBeNull();
  });
});
