import type { TFunction } from 'i18next';
import { en } from '../../lib/i18n/en';

/**
 * A reason the server records on job events (apps/jobs: `transition`, `record_event`). The
 * catalogue is the `jobReason` labels themselves (zh.ts must match them: its type says so);
 * tests/jobs/test_reason_catalogue.py checks every reason the server writes is there.
 */
type JobReason = keyof typeof en.jobReason;

function isJobReason(code: string): code is JobReason {
  return Object.hasOwn(en.jobReason, code);
}

/** The reason's label in the user's language; a code this build does not know, as sent. */
export function reasonLabel(t: TFunction, code: string): string {
  return isJobReason(code) ? t(`jobReason.${code}`) : code;
}
