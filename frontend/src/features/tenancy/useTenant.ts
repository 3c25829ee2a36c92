import { useSession } from '../auth/api';
import type { Role, SessionUser } from '../../lib/apiTypes';
import { useCurrentMembership } from './currentTenant';

export interface TenantContext {
  /** The tenant the user works in, or null (a platform admin without memberships). */
  slug: string | null;
  name: string | null;
  role: Role | null;
  isPlatformAdmin: boolean;
  user: SessionUser | null;
  /** Tenant admins (and platform admins) manage members and may submit P0-P2. */
  isTenantAdmin: boolean;
  /** Viewers read only. */
  canWrite: boolean;
}

export function useTenant(): TenantContext {
  const session = useSession();
  const memberships = session.data?.memberships ?? [];
  const current = useCurrentMembership(memberships);
  const isPlatformAdmin = session.data?.user.is_platform_admin ?? false;
  const role = current?.role ?? null;
  return {
    slug: current?.tenant.slug ?? null,
    name: current?.tenant.name ?? null,
    role,
    isPlatformAdmin,
    user: session.data?.user ?? null,
    isTenantAdmin: role === 'tenant_admin' || isPlatformAdmin,
    canWrite: role !== 'viewer' && (role !== null || isPlatformAdmin),
  };
}
