import { StyleProvider } from '@ant-design/cssinjs';
import { render } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { Suspense } from 'react';
import { AppProviders } from '../app/providers';
import { routes } from '../app/router';
import { createQueryClient } from '../lib/queryClient';
import type { Session } from '../lib/apiTypes';

/** Renders the whole app (providers, routes, lazy pages) at `path`, with a fresh cache. */
export function renderApp(path: string) {
  const queryClient = createQueryClient();
  // No retries in tests: an error answer must show its state at once.
  queryClient.setDefaultOptions({
    ...queryClient.getDefaultOptions(),
    queries: { ...queryClient.getDefaultOptions().queries, retry: false },
  });
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const view = render(
    // antd's CSS-in-JS goes into a detached element: with hundreds of rules in the document,
    // every jsdom getComputedStyle call (Testing Library visibility checks) takes ages.
    <StyleProvider container={document.createElement('div')}>
      <AppProviders queryClient={queryClient}>
        <Suspense fallback={<div>suspended</div>}>
          <RouterProvider router={router} />
        </Suspense>
      </AppProviders>
    </StyleProvider>,
  );
  return { ...view, router, queryClient };
}

export const ALICE: Session = {
  user: {
    id: 7,
    username: 'alice',
    display_name: 'Alice Chen',
    is_platform_admin: false,
    email: '',
    language: '',
    has_password: true,
  },
  memberships: [
    { tenant: { id: 1, slug: 'vision', name: 'Vision Lab' }, role: 'tenant_admin' },
    { tenant: { id: 2, slug: 'nlp', name: 'NLP Group' }, role: 'member' },
  ],

  currency: 'CNY',
};

export const NOT_LOGGED_IN = {
  status: 403,
  body: { detail: 'Authentication credentials were not provided.' },
};
