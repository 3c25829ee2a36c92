import dayjs from 'dayjs';
import type { paths } from '../../api/schema';

export type UsageRow =
  paths['/api/v1/usage/']['get']['responses'][200]['content']['application/json'][number];
export type GroupBy = NonNullable<
  NonNullable<paths['/api/v1/usage/']['get']['parameters']['query']>['group_by']
>;
export type Scope = 'tenant' | 'platform';

export const GROUPS: GroupBy[] = ['tenant', 'project', 'owner', 'pool', 'accelerator_model', 'job'];

const DAY_MS = 86_400_000;
/** The chart asks the API once per bar: at most this many bars, however long the range. */
export const MAX_BUCKETS = 31;
/** The longest range the API reports on (its `end` field error past it). */
export const MAX_REPORT_DAYS = 366;

/** Whether [start, end) is longer than the API reports on, as the server counts it. */
export function rangeTooLong(start: Date, end: Date): boolean {
  return end.getTime() - start.getTime() > MAX_REPORT_DAYS * DAY_MS;
}

export interface Bucket {
  start: Date;
  end: Date;
}

/**
 * Splits [start, end) into at most MAX_BUCKETS buckets of whole days each (1, 2, 3... days,
 * so a bar always means the same width); the last one is cut at `end`.
 */
export function buckets(start: Date, end: Date): Bucket[] {
  const span = end.getTime() - start.getTime();
  if (span <= 0) return [];
  const days = Math.ceil(span / DAY_MS);
  const width = Math.max(1, Math.ceil(days / MAX_BUCKETS)) * DAY_MS;
  const out: Bucket[] = [];
  for (let t = start.getTime(); t < end.getTime(); t += width) {
    out.push({ start: new Date(t), end: new Date(Math.min(t + width, end.getTime())) });
  }
  return out;
}

/**
 * The chart's label of each bucket: its day, or its first and last day ("MM-DD–MM-DD"), in
 * the reader's time zone; with the year when the range spans more than one year, so a
 * two-year range does not read "12-12–01-03".
 */
export function bucketLabels(bins: Bucket[]): string[] {
  const first = bins[0];
  const last = bins.at(-1);
  if (first === undefined || last === undefined) return [];
  const years = dayjs(first.start).year() !== dayjs(last.end).subtract(1, 'day').year();
  const format = years ? 'YYYY-MM-DD' : 'MM-DD';
  return bins.map((b) => {
    const from = dayjs(b.start);
    const to = dayjs(b.end).subtract(1, 'day');
    return to.isAfter(from, 'day')
      ? `${from.format(format)}–${to.format(format)}`
      : from.format(format);
  });
}

export interface StackedSeries {
  name: string;
  /** Device-hours per bucket. */
  data: number[];
}

/**
 * Per-bucket rows as stacked series: the `top` largest groups over the whole range by name,
 * everything else summed into `otherName`, so the legend stays readable.
 */
export function stackSeries(
  perBucket: UsageRow[][],
  top: number,
  otherName: string,
): StackedSeries[] {
  const totals = new Map<string, number>();
  for (const rows of perBucket) {
    for (const row of rows) totals.set(row.key, (totals.get(row.key) ?? 0) + row.device_hours);
  }
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const kept = ranked.slice(0, top).map(([key]) => key);
  const hasOther = ranked.length > top;
  const series: StackedSeries[] = kept.map((key) => ({
    name: key,
    data: perBucket.map((rows) => rows.find((r) => r.key === key)?.device_hours ?? 0),
  }));
  if (hasOther) {
    series.push({
      name: otherName,
      data: perBucket.map((rows) =>
        rows.filter((r) => !kept.includes(r.key)).reduce((sum, r) => sum + r.device_hours, 0),
      ),
    });
  }
  return series;
}

export function bucketCost(rows: UsageRow[]): number {
  return rows.reduce((sum, r) => sum + Number(r.cost), 0);
}

/** The API's CSV export of the same report (a plain link: the browser downloads it). */
export function csvUrl(
  scope: Scope,
  tenant: string | null,
  groupBy: GroupBy,
  start: Date,
  end: Date,
): string {
  const base =
    scope === 'platform' || tenant === null
      ? '/api/v1/usage/'
      : `/api/v1/tenants/${encodeURIComponent(tenant)}/usage/`;
  const query = new URLSearchParams({
    group_by: groupBy,
    start: start.toISOString(),
    end: end.toISOString(),
    export: 'csv',
  });
  return `${base}?${query.toString()}`;
}
