import type { TFunction } from 'i18next';
import type { InferenceService, JobState, ServiceRevision } from '../../lib/apiTypes';
import { en } from '../../lib/i18n/en';
import { JOB_STATES } from '../jobs/helpers';

type Metric = InferenceService['target_metric'];
type ScalingReason = keyof typeof en.inference.scalingReason;

const METRICS: readonly string[] = ['concurrency', 'qps', 'latency'] satisfies Metric[];

/** A service's state is its job's state; the API types it as a plain string. */
export function isJobState(state: string): state is JobState {
  return (JOB_STATES as readonly string[]).includes(state);
}

function isMetric(metric: string): metric is Metric {
  return METRICS.includes(metric);
}

function isScalingReason(code: string): code is ScalingReason {
  return Object.hasOwn(en.inference.scalingReason, code);
}

/** The autoscaler's metric (target_metric, a decision's metric) in the user's language. */
export function metricLabel(t: TFunction, metric: string): string {
  return isMetric(metric) ? t(`inference.metric_${metric}`) : metric;
}

/**
 * Why the autoscaler changed the replicas (ScalingDecision.reason), in the user's language;
 * a code this build does not know, as sent.
 */
export function scalingReasonLabel(t: TFunction, code: string): string {
  return isScalingReason(code) ? t(`inference.scalingReason.${code}`) : code;
}

/** The settings a revision's replicas run with beside the image and model. */
export type ServingSettings = ServiceRevision['settings'];

export const SERVING_FIELDS = [
  'port',
  'readiness_path',
  'liveness_path',
  'probe_initial_delay_s',
  'probe_period_s',
] as const satisfies readonly (keyof ServingSettings)[];

/** Whether a revision runs something other than the service does now. */
export function runsOtherThan(revision: ServiceRevision, service: InferenceService): boolean {
  return (
    revision.runtime_image !== service.runtime_image ||
    revision.model_uri !== service.model_uri ||
    SERVING_FIELDS.some((field) => revision.settings[field] !== service[field])
  );
}

/** "port 8000 · readiness /health · liveness /health · probes from 30 s, every 10 s". */
export function servingSettingsText(t: TFunction, s: ServingSettings): string {
  return t('inference.servingSettings', {
    port: s.port,
    readiness: s.readiness_path,
    liveness: s.liveness_path,
    delay: s.probe_initial_delay_s,
    period: s.probe_period_s,
  });
}
