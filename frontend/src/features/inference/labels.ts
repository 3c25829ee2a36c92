import type { TFunction } from 'i18next';
import type { InferenceService, JobState } from '../../lib/apiTypes';
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
