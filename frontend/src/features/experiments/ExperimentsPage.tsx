import { Route, Routes } from 'react-router';
import { NoTenantResult } from '../../components/NoTenantResult';
import { useTenant } from '../tenancy/useTenant';
import { CompareRunsPage } from './CompareRunsPage';
import { RunDetailPage } from './RunDetailPage';

/** /experiments (?runs=1,2,3 selects runs to compare) and deep links /experiments/runs/:id. */
export function ExperimentsPage() {
  const tenant = useTenant();
  if (tenant.slug === null) return <NoTenantResult />;
  return (
    <Routes>
      <Route index element={<CompareRunsPage tenant={tenant.slug} />} />
      <Route path="runs/:id" element={<RunDetailPage tenant={tenant.slug} />} />
    </Routes>
  );
}
