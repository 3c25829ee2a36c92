import { Skeleton } from 'antd';
import { lazy, Suspense } from 'react';
import { Route, Routes } from 'react-router';
import { NoTenantResult, ReadOnlyResult } from '../../components/NoTenantResult';
import { useTenant } from '../tenancy/useTenant';
import { SweepDetailPage } from './SweepDetailPage';
import { SweepsListPage } from './SweepsListPage';

// Its own chunk: the YAML parser it brings is needed nowhere else here.
const SubmitSweepPage = lazy(() =>
  import('./SubmitSweepPage').then((m) => ({ default: m.SubmitSweepPage })),
);

/** /sweeps, /sweeps/new and deep links to /sweeps/:id. */
export function SweepsRoutes() {
  const tenant = useTenant();
  if (tenant.slug === null) return <NoTenantResult />;
  return (
    <Routes>
      <Route index element={<SweepsListPage tenant={tenant.slug} canWrite={tenant.canWrite} />} />
      <Route
        path="new"
        element={
          tenant.canWrite ? (
            <Suspense fallback={<Skeleton active paragraph={{ rows: 8 }} />}>
              <SubmitSweepPage tenant={tenant.slug} />
            </Suspense>
          ) : (
            <ReadOnlyResult />
          )
        }
      />
      <Route path=":id" element={<SweepDetailPage tenant={tenant.slug} />} />
    </Routes>
  );
}
