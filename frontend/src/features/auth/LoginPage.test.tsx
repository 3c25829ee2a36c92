import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { ALICE, NOT_LOGGED_IN, renderApp } from '../../test/renderApp';

const OVERVIEW = {
  tenants: 3,
  clusters: 1,
  pools: 2,
  nodes: 16,
  gpus: 128,
  spare_gpus: 0,
  gpus_by_model: [{ model: 'A800-SXM4-80GB', vendor: 'nvidia', count: 128 }],
  jobs_running: 5,
  jobs_pending: 2,
};

async function fillAndSubmit(username: string, password: string) {
  const user = userEvent.setup({ delay: null });
  await user.type(await screen.findByLabelText('Username'), username);
  await user.type(screen.getByLabelText('Password'), password);
  await user.click(screen.getByRole('button', { name: 'Sign in' }));
}

describe('login', () => {
  it('shows the error message on 400 and stays on the login page', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': { ...NOT_LOGGED_IN, setCookie: 'csrftoken=tok123; path=/' },
      'POST /api/v1/auth/login/': {
        status: 400,
        body: {
          detail: 'Invalid input.',
          errors: { password: ['Unknown username or wrong password.'] },
        },
      },
    });
    const { router } = renderApp('/login?next=%2Fjobs');

    await fillAndSubmit('alice', 'wrong-password');

    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe('Unknown username or wrong password.');
    expect(router.state.location.pathname).toBe('/login');
    const login = requests.filter((r) => r.path === '/api/v1/auth/login/');
    expect(login).toHaveLength(1);
    expect(login[0]?.body).toEqual({ username: 'alice', password: 'wrong-password' });
    expect(login[0]?.headers.get('X-CSRFToken')).toBe('tok123');
  });

  it('sends an anonymous visitor to /login and back to the asked page after login', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': { ...NOT_LOGGED_IN, setCookie: 'csrftoken=tok123; path=/' },
      'POST /api/v1/auth/login/': { status: 200, body: ALICE },
      'GET /api/v1/overview/': { status: 200, body: OVERVIEW },
    });
    const { router } = renderApp('/overview');

    await waitFor(() => {
      expect(router.state.location.pathname).toBe('/login');
    });
    expect(router.state.location.search).toBe('?next=%2Foverview');

    await fillAndSubmit('alice', 'correct-horse');

    await waitFor(() => {
      expect(router.state.location.pathname).toBe('/overview');
    });
    expect((await screen.findByTestId('stat-gpus')).textContent).toBe('128');
    expect(screen.getByTestId('user-menu').textContent).toBe('Alice Chen');
  });

  it('does not send the user off-site through ?next=', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': { ...NOT_LOGGED_IN, setCookie: 'csrftoken=tok123; path=/' },
      'POST /api/v1/auth/login/': { status: 200, body: ALICE },
      'GET /api/v1/overview/': { status: 200, body: OVERVIEW },
    });
    const { router } = renderApp('/login?next=%2F%2Fevil.example%2Fsteal');

    await fillAndSubmit('alice', 'correct-horse');

    await waitFor(() => {
      expect(router.state.location.pathname).toBe('/overview');
    });
  });

  it('offers single sign-on when the server has a provider, keeping where to go after', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': { ...NOT_LOGGED_IN, setCookie: 'csrftoken=tok123; path=/' },
      'GET /api/v1/auth/providers/': {
        status: 200,
        body: { sso: { name: 'Lab SSO', login_url: '/api/v1/auth/oidc/login/' } },
      },
    });
    renderApp('/login?next=%2Fjobs%3Fstate%3Dqueued');
    const button = await screen.findByRole('link', { name: 'Sign in with Lab SSO' });
    expect(button.getAttribute('href')).toBe(
      '/api/v1/auth/oidc/login/?next=%2Fjobs%3Fstate%3Dqueued',
    );
    expect(screen.getByText('or with a password')).toBeTruthy();
  });

  it('says when single sign-on failed', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': { ...NOT_LOGGED_IN, setCookie: 'csrftoken=tok123; path=/' },
    });
    renderApp('/login?sso=failed');
    expect(await screen.findByText(/Single sign-on failed/)).toBeTruthy();
  });
});
