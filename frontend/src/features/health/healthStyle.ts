import type { Alert, NodeHealth } from '../../lib/apiTypes';

/** One colour per node health, shared by the grid and the node page. */
export const HEALTH_COLOR: Record<NodeHealth['health'], string> = {
  healthy: '#52c41a',
  degraded: '#faad14',
  faulty: '#ff4d4f',
};

/** Node health states, best first: the order of the grid's filter and counts. */
export const HEALTH_STATES = [
  'healthy',
  'degraded',
  'faulty',
] as const satisfies readonly NodeHealth['health'][];

/** Severities, mildest first: the order of every severity picker. */
export const SEVERITIES = [
  'info',
  'warning',
  'critical',
] as const satisfies readonly Alert['severity'][];

export const SEVERITY_COLOR: Record<Alert['severity'], string> = {
  info: 'blue',
  warning: 'orange',
  critical: 'red',
};

export type CheckStatus = NodeHealth['checks'][number]['status'];

export const CHECK_STATUS_COLOR: Record<CheckStatus, string> = {
  ok: 'green',
  warn: 'orange',
  fail: 'red',
  absent: 'default',
};

/** The schema types `faults` loosely (a JSON field); the agent sends a list of fault codes. */
export function faultCodes(faults: unknown): string[] {
  return Array.isArray(faults)
    ? faults.map((f) => (typeof f === 'string' ? f : JSON.stringify(f)))
    : [];
}
