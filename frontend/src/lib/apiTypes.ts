import type { paths } from '../api/schema';

// Types named by endpoint, not by schema component: component names follow the backend's
// serializer names and may change; the paths are the contract.
type Json<R> = R extends { content: { 'application/json': infer Body } } ? Body : never;
type Ok<Op> = Op extends { responses: { 200: infer R } } ? Json<R> : never;

export type Session = Ok<paths['/api/v1/auth/session/']['get']>;
export type SessionUser = Session['user'];
export type Membership = Session['memberships'][number];
export type Role = Membership['role'];
export type LoginBody = Json<NonNullable<paths['/api/v1/auth/login/']['post']['requestBody']>>;
export type Profile = Ok<paths['/api/v1/auth/profile/']['get']>;
export type ProfileBody = Body<paths['/api/v1/auth/profile/']['patch']>;
export type PasswordChangeBody = Body<paths['/api/v1/auth/password/']['post']>;
export type AdminUser = Item<Ok<paths['/api/v1/users/']['get']>>;
export type AdminUserCreate = Body<paths['/api/v1/users/']['post']>;
export type AdminUserEdit = Body<paths['/api/v1/users/{id}/']['patch']>;
export type Overview = Ok<paths['/api/v1/overview/']['get']>;
export type GpuModelCount = Overview['gpus_by_model'][number];

type Created<Op> = Op extends { responses: { 201: infer R } } ? Json<R> : never;
type Body<Op> = Op extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;
type Item<List> = List extends { results: (infer T)[] } ? T : List extends (infer T)[] ? T : never;

type TenantPath = '/api/v1/tenants/{tenant}';

export type Pool = Item<Ok<paths['/api/v1/pools/']['get']>>;
export type QueueEntry = Item<Ok<paths['/api/v1/pools/{id}/queue/']['get']>>;
export type PoolTopology = Ok<paths['/api/v1/pools/{id}/topology/']['get']>;
export type TopologyCounts = PoolTopology['summary'];
export type TopologyLeaf = PoolTopology['spines'][number]['units'][number]['leaves'][number];
export type TopologyNode = TopologyLeaf['nodes'][number];
export type JobPage = Ok<paths[`${TenantPath}/jobs/`]['get']>;
export type Job = Item<JobPage>;
export type JobState = Job['state'];
export type JobKind = Job['kind'];
export type JobSubmit = Body<paths[`${TenantPath}/jobs/`]['post']>;
export type ReplicaGroupSubmit = JobSubmit['replica_groups'][number];
export type Allocation = Job['allocations'][number];
export type JobEvent = Item<Ok<paths[`${TenantPath}/jobs/{id}/events/`]['get']>>;
export type JobPipeline = Ok<paths[`${TenantPath}/jobs/{id}/pipeline/`]['get']>;
export type PipelineJob = JobPipeline['jobs'][number];
export type PipelineSubmit = Body<paths[`${TenantPath}/jobs/pipeline/`]['post']>;
export type PipelineQueued = Created<paths[`${TenantPath}/jobs/pipeline/`]['post']>;
export type Quota = Item<Ok<paths['/api/v1/quotas/']['get']>>;
export type QuotaPatch = Body<paths['/api/v1/quotas/{id}/']['patch']>;
export type TenantQuota = Item<Ok<paths[`${TenantPath}/quotas/`]['get']>>;
export type Member = Item<Ok<paths[`${TenantPath}/members/`]['get']>>;
export type ApiToken = Item<Ok<paths['/api/v1/tokens/']['get']>>;
export type NewApiToken = Created<paths['/api/v1/tokens/']['post']>;
export type AuditEntry = Item<Ok<paths[`${TenantPath}/audit/`]['get']>>;
export type NodeHealth = Item<Ok<paths['/api/v1/health/nodes/']['get']>>;
export type Incident = Item<Ok<paths['/api/v1/health/incidents/']['get']>>;
export type Alert = Item<Ok<paths['/api/v1/health/alerts/']['get']>>;
export type FaultRule = Item<Ok<paths['/api/v1/health/rules/']['get']>>;
export type AlertReceiver = Item<Ok<paths['/api/v1/health/receivers/']['get']>>;
export type NodeToken = Item<Ok<paths['/api/v1/health/node-tokens/']['get']>>;
export type ProbeRun = Item<Ok<paths['/api/v1/health/probe-runs/']['get']>>;
export type InferenceService = Item<Ok<paths[`${TenantPath}/inference/services/`]['get']>>;
export type InferenceServiceSubmit = Body<paths[`${TenantPath}/inference/services/`]['post']>;
export type TrafficSample = Item<
  Ok<paths[`${TenantPath}/inference/services/{id}/metrics/`]['get']>
>;
export type ScalingDecision = Item<
  Ok<paths[`${TenantPath}/inference/services/{id}/decisions/`]['get']>
>;
export type InferenceServicePatch = Body<paths[`${TenantPath}/inference/services/{id}/`]['patch']>;
export type ServiceRevision = Item<
  Ok<paths[`${TenantPath}/inference/services/{id}/revisions/`]['get']>
>;
export type TelemetryFrame = Ok<paths['/api/v1/telemetry/snapshot/']['get']>;
export type WhatIfRun = Item<Ok<paths['/api/v1/scheduling/what-if/']['get']>>;
export type WhatIfSubmit = Body<paths['/api/v1/scheduling/what-if/']['post']>;
export type WhatIfResult = NonNullable<WhatIfRun['result']>;
export type WhatIfPolicyResult = WhatIfResult['policies'][number];
export type HistoryPoint = Item<Ok<paths['/api/v1/telemetry/history/']['get']>['points']>;
export type IdleFlag = Item<Ok<paths[`${TenantPath}/governance/flags/`]['get']>>;
export type Notice = Item<Ok<paths[`${TenantPath}/governance/notifications/`]['get']>>;
export type DefaultPolicy = Ok<paths['/api/v1/governance/default-policy/']['get']>;
export type CheckpointRequest = Ok<paths[`${TenantPath}/jobs/{id}/checkpoint/`]['get']>;
export type TenantPolicy = Ok<paths[`${TenantPath}/governance/policy/`]['get']>;
export type Project = Item<Ok<paths[`${TenantPath}/projects/`]['get']>>;
export type SweepPage = Ok<paths[`${TenantPath}/sweeps/`]['get']>;
export type Sweep = Item<SweepPage>;
export type SweepState = Sweep['state'];
export type SweepCounts = Sweep['counts'];
export type SweepDetail = Ok<paths[`${TenantPath}/sweeps/{id}/`]['get']>;
export type SweepResult = SweepDetail['outcomes'][number];
export type SweepSubmit = Body<paths[`${TenantPath}/sweeps/`]['post']>;
export type SweepCreated = Created<paths[`${TenantPath}/sweeps/`]['post']>;
export type TrialOfJob = NonNullable<Job['trial']>;
