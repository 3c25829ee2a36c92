import type { AuditEntry } from '../../lib/apiTypes';

/** A field of an object's state, as the audit entry stored it. */
function show(value: unknown): string {
  if (value === undefined) return '—';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The fields an entry changed: every field for a create or delete, only those that differ
 * for an update. */
export function changedFields(entry: Pick<AuditEntry, 'before' | 'after'>) {
  const record = (v: unknown): Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const before = record(entry.before);
  const after = record(entry.after);
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys
    .filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]))
    .map((key) => ({ key, before: show(before[key]), after: show(after[key]) }));
}
