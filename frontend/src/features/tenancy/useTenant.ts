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
  /** Whether the user may cancel (stop) a job `owner` submitted: the owner or a tenant admin,
   * the server's rule (others get a 403), so pages offer Stop/Cancel only then. */
  mayCancel: (owner: string | null | undefined) => boolean;
}

export function useTenant(): TenantContext {
  const session = useSession();
  const memberships = session.data?.memberships ?? [];
  const current = useCurrentMembership(memberships);
  const isPlatformAdmin = session.data?.user.is_platform_admin ?? false;
  const role = current?.role ?? null;
  const user = session.data?.user ?? null;
  const isTenantAdmin = role === 'tenant_admin' || isPlatformAdmin;
  const canWrite = role !== 'viewer' && (role !== null || isPlatformAdmin);
  return {
    slug: current?.tenant.slug ?? null,
    name: current?.tenant.name ?? null,
    role,
    isPlatformAdmin,
    user,
    isTenantAdmin,
    canWrite,
    mayCancel: (owner) => canWrite && (isTenantAdmin || (user !== null && owner === user.username)),
  };
}
