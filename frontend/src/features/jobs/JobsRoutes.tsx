import { Skeleton } from 'antd';
import { lazy, Suspense } from 'react';
import { Route, Routes } from 'react-router';
import { NoTenantResult, ReadOnlyResult } from '../../components/NoTenantResult';
import { useTenant } from '../tenancy/useTenant';
import { JobDetailPage } from './JobDetailPage';
import { JobsListPage } from './JobsListPage';
import { SubmitJobPage } from './SubmitJobPage';

// Its own chunk: the YAML parser it brings is needed nowhere else.
const SubmitPipelinePage = lazy(() =>
  import('./SubmitPipelinePage').then((m) => ({ default: m.SubmitPipelinePage })),
);

/** /jobs, /jobs/new, /jobs/new-pipeline and deep links to /jobs/:id. */
export function JobsRoutes() {
  const tenant = useTenant();
  if (tenant.slug === null) return <NoTenantResult />;
  return (
    <Routes>
      <Route index element={<JobsListPage tenant={tenant.slug} canWrite={tenant.canWrite} />} />
      <Route
        path="new"
        element={
          tenant.canWrite ? (
            <SubmitJobPage tenant={tenant.slug} isTenantAdmin={tenant.isTenantAdmin} />
          ) : (
            <ReadOnlyResult />
          )
        }
      />
      <Route
        path="new-pipeline"
        element={
          tenant.canWrite ? (
            <Suspense fallback={<Skeleton active paragraph={{ rows: 8 }} />}>
              <SubmitPipelinePage tenant={tenant.slug} />
            </Suspense>
          ) : (
            <ReadOnlyResult />
          )
        }
      />
      <Route
        path=":id"
        element={<JobDetailPage tenant={tenant.slug} canWrite={tenant.canWrite} />}
      />
    </Routes>
  );
}
