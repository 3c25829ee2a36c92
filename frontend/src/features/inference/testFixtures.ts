// What the inference pages' tests answer for a service and its revisions.

export const BASE = '/api/v1/tenants/vision/inference/services/';

export const SERVICE = {
  id: 5,
  name: 'qwen-chat',
  model_uri: 's3://models/qwen2-7b',
  state: 'running',
  owner: 'bob',
  simulated: true,
  job: 30,
  pool: 2,
  accelerators: 1,
  accelerator_milli: 0,
  ready_replicas: 2,
  desired_replicas: 3,
  loading_replicas: 1,
  min_replicas: 1,
  max_replicas: 4,
  target_metric: 'concurrency',
  target_value: 24,
  runtime_image: 'vllm/vllm-openai:v0.6.3',
  panic: false,
  max_surge: 1,
  max_unavailable: 0,
  revision: 1,
  serving_revision: 1,
  rollout_state: '',
  updated_replicas: 0,
  rollout_reason: '',
  rollout_detail: [],
};

/** The service's first revision, serving. */
export const REVISION = {
  number: 1,
  runtime_image: 'vllm/vllm-openai:v0.6.3',
  model_uri: 's3://models/qwen2-7b',
  state: 'complete',
  created_at: '2026-11-30T00:00:00Z',
  created_by: 'bob',
  rollback_of: null,
  finished_at: '2026-11-30T00:02:00Z',
  message: '',
  message_key: '',
  message_args: {},
};
