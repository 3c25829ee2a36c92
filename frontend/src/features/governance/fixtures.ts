import type { IdleFlag, TenantPolicy } from '../../lib/apiTypes';

export const GOV = '/api/v1/tenants/vision/governance';

/** The built-in platform default policy (apps/governance/rules.py). */
export const DEFAULT_POLICY: TenantPolicy['default'] = {
  util_threshold_pct: 10,
  training_idle_s: 7200,
  notebook_idle_s: 3600,
  grace_s: 1800,
  max_extensions: 2,
  extension_s: 3600,
  queue_action: 'expire',
  max_runtime_s: null,
};

/** The policy endpoint's answer: the default, tightened by `effective` when customized. */
export function policyAnswer(effective: Partial<TenantPolicy['effective']>, customized: boolean) {
  return {
    status: 200,
    body: {
      effective: { ...DEFAULT_POLICY, webhook_url: '', ...effective },
      default: DEFAULT_POLICY,
      customized,
    },
  };
}

/** Job 11's flag, warned at 10:00 with the stop at 10:30 unless overridden. */
export function makeFlag(overrides: Partial<IdleFlag> = {}): IdleFlag {
  return {
    id: 5,
    job: 11,
    job_name: 'resnet',
    job_kind: 'training',
    job_state: 'running',
    state: 'warned',
    idle_since: '2026-12-03T08:00:00Z',
    peak_util_pct: 3.5,
    warned_at: '2026-12-03T10:00:00Z',
    stop_at: '2026-12-03T10:30:00Z',
    extensions_used: 0,
    reminded_at: null,
    exempt_reason: '',
    exempted_by: '',
    stopped_at: null,
    device_milli: 0,
    checkpoint_note: '',
    updated_at: '2026-12-03T10:00:00Z',
    ...overrides,
  };
}
