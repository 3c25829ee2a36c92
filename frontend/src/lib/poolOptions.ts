import type { Pool } from './apiTypes';

/**
 * Select options for pools: the pool's name, or `cluster/pool` where two clusters use the same
 * name (pool names are unique within a cluster only, and two "default" pools must not look
 * alike).
 */
export function poolOptions(pools: Pool[] | undefined): { value: number; label: string }[] {
  const list = pools ?? [];
  const seen = new Map<string, number>();
  for (const pool of list) seen.set(pool.name, (seen.get(pool.name) ?? 0) + 1);
  return list.map((pool) => ({
    value: pool.id,
    label: (seen.get(pool.name) ?? 0) > 1 ? `${pool.cluster}/${pool.name}` : pool.name,
  }));
}
