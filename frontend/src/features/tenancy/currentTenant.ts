import { useSyncExternalStore } from 'react';
import type { Membership } from '../../lib/apiTypes';

// The tenant the user is working in, by slug, remembered per browser. It is a view choice,
// not an authorisation: the API scopes every object by the user's memberships regardless.
const STORAGE_KEY = 'zhisuan.tenant';
const listeners = new Set<() => void>();
let unstored: string | null = null; // when storage is unavailable (privacy modes)

function snapshot(): string | null {
  try {
    return window.localStorage.getItem(STORAGE_KEY);
  } catch {
    return unstored;
  }
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  // Another tab switched tenant: follow it.
  const onStorage = (event: StorageEvent) => {
    if (event.key === STORAGE_KEY) listener();
  };
  window.addEventListener('storage', onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', onStorage);
  };
}

export function setCurrentTenantSlug(slug: string): void {
  try {
    window.localStorage.setItem(STORAGE_KEY, slug);
  } catch {
    unstored = slug;
  }
  listeners.forEach((listener) => {
    listener();
  });
}

/** The selected membership: the remembered tenant if still a member, else the first one. */
export function useCurrentMembership(memberships: Membership[]): Membership | null {
  const slug = useSyncExternalStore(subscribe, snapshot, snapshot);
  return memberships.find((m) => m.tenant.slug === slug) ?? memberships[0] ?? null;
}
