import { Navigate, Outlet, useLocation } from 'react-router';
import { FullPageSpin } from '../../components/FullPageSpin';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { useSession } from './api';
import { loginPathFor } from './next';

/** Renders the child routes for a signed-in user; everyone else goes to /login?next=... */
export function RequireAuth() {
  const location = useLocation();
  const session = useSession();

  if (session.isPending) {
    return <FullPageSpin />;
  }
  if (session.isError) {
    return (
      <QueryErrorResult error={session.error} onRetry={() => void session.refetch()} fullPage />
    );
  }
  if (session.data === null) {
    return <Navigate to={loginPathFor(location)} replace />;
  }
  return <Outlet />;
}
