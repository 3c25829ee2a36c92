import type { ReactNode } from 'react';
import { createBrowserRouter, Navigate, type RouteObject } from 'react-router';
import { RequireAuth } from '../features/auth/RequireAuth';
import {
  AppShell,
  ClusterPage,
  ComingSoonPage,
  ExperimentsPage,
  HealthPage,
  InferencePage,
  JobsRoutes,
  LoginPage,
  NotebooksPage,
  NotFoundPage,
  OverviewPage,
  QuotasPage,
  SettingsPage,
  SweepsRoutes,
  UsagePage,
  WhatIfPage,
} from './lazyPages';
import { NAV_ITEMS, type NavKey } from './nav';

const BUILT_PAGES: Partial<Record<NavKey, ReactNode>> = {
  overview: <OverviewPage />,
  cluster: <ClusterPage />,
  jobs: <JobsRoutes />,
  notebooks: <NotebooksPage />,
  inference: <InferencePage />,
  experiments: <ExperimentsPage />,
  sweeps: <SweepsRoutes />,
  quotas: <QuotasPage />,
  whatif: <WhatIfPage />,
  health: <HealthPage />,
  usage: <UsagePage />,
  settings: <SettingsPage />,
};

export const routes: RouteObject[] = [
  { path: '/login', element: <LoginPage /> },
  {
    element: <RequireAuth />,
    children: [
      {
        element: <AppShell />,
        children: [
          { index: true, element: <Navigate to="/overview" replace /> },
          ...NAV_ITEMS.map((item) => ({
            path: `${item.path}/*`,
            element: BUILT_PAGES[item.key] ?? <ComingSoonPage area={item.key} />,
          })),
          { path: '*', element: <NotFoundPage /> },
        ],
      },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(routes);
}
