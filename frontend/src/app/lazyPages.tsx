import { lazy } from 'react';

// Every page is its own chunk: the first screen loads only the frame it needs.
export const LoginPage = lazy(() =>
  import('../features/auth/LoginPage').then((m) => ({ default: m.LoginPage })),
);
export const AppShell = lazy(() =>
  import('./shell/AppShell').then((m) => ({ default: m.AppShell })),
);
export const OverviewPage = lazy(() =>
  import('../features/overview/OverviewPage').then((m) => ({ default: m.OverviewPage })),
);
export const ComingSoonPage = lazy(() =>
  import('./ComingSoonPage').then((m) => ({ default: m.ComingSoonPage })),
);
export const NotFoundPage = lazy(() =>
  import('./NotFoundPage').then((m) => ({ default: m.NotFoundPage })),
);
