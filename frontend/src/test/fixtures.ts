import type { Job, PipelineJob, Pool, PoolTopology, Session, TopologyNode } from '../lib/apiTypes';

export const BOB: Session = {
  user: {
    id: 3,
    username: 'bob',
    display_name: 'Bob',
    is_platform_admin: false,
    email: 'bob@vision.example',
    language: '',
    has_password: true,
  },
  memberships: [{ tenant: { id: 1, slug: 'vision', name: 'Vision Lab' }, role: 'member' }],

  currency: 'CNY',
};

export const ADMIN: Session = {
  user: {
    id: 1,
    username: 'admin',
    display_name: 'Platform Admin',
    is_platform_admin: true,
    email: '',
    language: '',
    has_password: true,
  },
  memberships: [],

  currency: 'CNY',
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
    capacity: [{ model: 'A800', vendor: 'nvidia', devices: 128, per_node: 8 }],
  },
  {
    id: 2,
    name: 'ascend-infer',
    cluster: 'sim-a800',
    description: '',
    capacity: [{ model: 'Ascend910B', vendor: 'huawei', devices: 32, per_node: 8 }],
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
    pending_detail: [],
    queue_position: null,
    expected_start_at: null,
    expected_start_as_of: null,
    attempt: 0,
    failures: 0,
    submitted_at: '2026-11-30T00:00:00Z',
    admitted_at: null,
    started_at: null,
    finished_at: null,
    allocations: [],
    open_url: null,
    home_job: null,
    home_deleted_at: null,
    after_jobs: [],
    next_jobs: [],
    waiting_for_jobs: false,
    released_at: null,
    trial: null,
    ...overrides,
  };
}

export function page<T>(results: T[]) {
  return { status: 200, body: { next: null, previous: null, results } };
}

/** A pool of four 8-GPU servers in two leaves of one unit (the Cluster page and job pages). */
export const topologyCounts = (c: Partial<PoolTopology['summary']>): PoolTopology['summary'] => ({
  nodes: 0,
  devices: 0,
  used: 0,
  free: 0,
  unavailable: 0,
  stranded: 0,
  whole_free_nodes: 0,
  spare_nodes: 0,
  ...c,
});
const topologyNode = (id: number, name: string, n: Partial<TopologyNode>): TopologyNode => ({
  id,
  name,
  model: 'A800',
  devices: 8,
  used: 0,
  free: 8,
  broken: 0,
  state: 'free',
  health: 'healthy',
  cordoned: false,
  held: false,
  ...n,
});
const LEAF0 = topologyCounts({
  nodes: 2,
  devices: 16,
  used: 5,
  free: 11,
  stranded: 3,
  whole_free_nodes: 1,
});
// The pool, its one spine and its one unit hold the same four servers.
const TOTAL = topologyCounts({
  nodes: 4,
  devices: 32,
  used: 13,
  free: 11,
  unavailable: 8,
  stranded: 3,
  whole_free_nodes: 1,
});
const LEAF1 = topologyCounts({ nodes: 2, devices: 16, used: 8, unavailable: 8 });
export const TOPOLOGY: PoolTopology = {
  pool: { id: 1, name: 'a800-train' },
  replica_size: 8,
  summary: TOTAL,
  largest_gang: [{ model: 'A800', leaf: 8, scalable_unit: 8, pool: 8 }],
  queue: {
    jobs: 3,
    devices: 272,
    by_code: [
      { code: 'capacity', jobs: 2, devices: 16 },
      { code: 'reserved', jobs: 1, devices: 256 },
    ],
  },
  spines: [
    {
      name: 'spine0',
      summary: TOTAL,
      units: [
        {
          name: 'su0',
          summary: TOTAL,
          leaves: [
            {
              name: 'leaf0',
              summary: LEAF0,
              nodes: [
                topologyNode(1, 'a800-001', { held: true }),
                topologyNode(2, 'a800-002', { state: 'partial', used: 5, free: 3 }),
              ],
            },
            {
              name: 'leaf1',
              summary: LEAF1,
              nodes: [
                topologyNode(3, 'a800-003', { state: 'full', used: 8, free: 0 }),
                topologyNode(4, 'a800-004', { state: 'unavailable', free: 0, cordoned: true }),
              ],
            },
          ],
        },
      ],
    },
  ],
};

/** A job of a pipeline answer (GET jobs/{id}/pipeline/). */
export function pipelineJob(
  id: number,
  name: string,
  state: PipelineJob['state'],
  after: number[],
  times: Partial<PipelineJob> = {},
): PipelineJob {
  return {
    id,
    name,
    kind: 'training',
    state,
    owner: 'bob',
    after,
    submitted_at: '2026-11-30T00:00:00Z',
    started_at: null,
    finished_at: null,
    expected_start_at: null,
    ...times,
  };
}
