import type { TFunction } from 'i18next';
import { currentLanguage } from '../../lib/i18n';
import { en } from '../../lib/i18n/en';
import { noteText } from './schedulerText';

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

/**
 * An event's message in the user's language where the platform wrote it from its catalogue
 * (`message_key`, apps/jobs/notes.py: its own notes, or the scheduler's phrase for a
 * preemption); anything else (a cluster's words, a key this build does not know, a note it
 * cannot say whole) as the server sent it.
 */
export function eventMessage(
  t: TFunction,
  event: { message: string; message_key: string; message_args: Record<string, unknown> },
): string {
  if (event.message_key === '') return event.message;
  const note = { key: event.message_key, args: event.message_args };
  return noteText(t, currentLanguage(), note, event.message);
}
