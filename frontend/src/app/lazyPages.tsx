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
export const JobsRoutes = lazy(() =>
  import('../features/jobs/JobsRoutes').then((m) => ({ default: m.JobsRoutes })),
);
export const NotebooksPage = lazy(() =>
  import('../features/notebooks/NotebooksPage').then((m) => ({ default: m.NotebooksPage })),
);
export const InferencePage = lazy(() =>
  import('../features/inference/InferencePage').then((m) => ({ default: m.InferencePage })),
);
export const QuotasPage = lazy(() =>
  import('../features/quotas/QuotasPage').then((m) => ({ default: m.QuotasPage })),
);
export const HealthPage = lazy(() =>
  import('../features/health/HealthPage').then((m) => ({ default: m.HealthPage })),
);
export const SettingsPage = lazy(() =>
  import('../features/settings/SettingsPage').then((m) => ({ default: m.SettingsPage })),
);
export const ClusterPage = lazy(() =>
  import('../features/cluster/ClusterPage').then((m) => ({ default: m.ClusterPage })),
);
export const ExperimentsPage = lazy(() =>
  import('../features/experiments/ExperimentsPage').then((m) => ({ default: m.ExperimentsPage })),
);
export const SweepsRoutes = lazy(() =>
  import('../features/sweeps/SweepsRoutes').then((m) => ({ default: m.SweepsRoutes })),
);
export const UsagePage = lazy(() =>
  import('../features/usage/UsagePage').then((m) => ({ default: m.UsagePage })),
);
export const WhatIfPage = lazy(() =>
  import('../features/whatif/WhatIfPage').then((m) => ({ default: m.WhatIfPage })),
);
