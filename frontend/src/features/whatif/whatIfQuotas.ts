import type { Quota, WhatIfSubmit } from '../../lib/apiTypes';

/** One row of the form: a current quota (by `quotaKey`) and the values to replay it with. */
export interface QuotaChangeValue {
  quota?: string;
  guarantee?: number;
  borrow_limit?: number;
}

export function quotaKey(q: { tenant: string; pool: number; accelerator_model: string }): string {
  return `${q.tenant}|${q.pool}|${q.accelerator_model}`;
}

/** The rows as the API takes them; a row whose quota is unknown is left out. */
export function quotaChanges(
  rows: QuotaChangeValue[] | undefined,
  quotas: Quota[],
): NonNullable<WhatIfSubmit['quota_changes']> {
  return (rows ?? []).flatMap((row) => {
    const q = quotas.find((x) => quotaKey(x) === row.quota);
    return q
      ? [
          {
            tenant: q.tenant,
            pool: q.pool,
            accelerator_model: q.accelerator_model,
            guarantee: row.guarantee ?? q.guarantee ?? 0,
            borrow_limit: row.borrow_limit ?? q.borrow_limit ?? 0,
          },
        ]
      : [];
  });
}
