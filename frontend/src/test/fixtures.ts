import type { Job, Pool, Session } from '../lib/apiTypes';

export const BOB: Session = {
  user: { id: 3, username: 'bob', display_name: 'Bob', is_platform_admin: false },
  memberships: [{ tenant: { id: 1, slug: 'vision', name: 'Vision Lab' }, role: 'member' }],
};

export const ADMIN: Session = {
  user: { id: 1, username: 'admin', display_name: 'Platform Admin', is_platform_admin: true },
  memberships: [],
};

export function sessionOf(body: Session) {
  return { status: 200, body, setCookie: 'csrftoken=tok123; path=/' };
}

export const POOLS: Pool[] = [
  {
    id: 1,
    name: 'a800-train',
    cluster: 'sim-a800',
    description: '',
    capacity: [{ model: 'A800', vendor: 'nvidia', devices: 128 }],
  },
  {
    id: 2,
    name: 'ascend-infer',
    cluster: 'sim-a800',
    description: '',
    capacity: [{ model: 'Ascend910B', vendor: 'huawei', devices: 32 }],
  },
];

export function makeJob(overrides: Partial<Job> = {}): Job {
  return {
    id: 11,
    name: 'resnet',
    kind: 'training',
    pool: 1,
    project: null,
    priority: 4,
    owner: 'bob',
    accelerator_model: 'A800',
    max_wait_s: undefined,
    max_runtime_s: undefined,
    max_retries: 3,
    spec: {},
    requested_devices: 16,
    requested_milli: 0,
    state: 'queued',
    state_reason: '',
    state_changed_at: '2026-11-30T00:00:00Z',
    pending_code: '',
    pending_message: '',
    queue_position: null,
    attempt: 0,
    failures: 0,
    submitted_at: '2026-11-30T00:00:00Z',
    admitted_at: null,
    started_at: null,
    finished_at: null,
    allocations: [],
    open_url: null,
    ...overrides,
  };
}

export function page<T>(results: T[]) {
  return { status: 200, body: { next: null, previous: null, results } };
}
