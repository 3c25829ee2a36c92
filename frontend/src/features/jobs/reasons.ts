import type { TFunction } from 'i18next';
import { currentLanguage } from '../../lib/i18n';
import { en } from '../../lib/i18n/en';
import { schedulerText } from './schedulerText';

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

type JobNote = keyof typeof en.jobNote;
type NoteTier = keyof typeof en.jobNoteTier;

function isJobNote(key: string): key is JobNote {
  return Object.hasOwn(en.jobNote, key);
}

function isNoteTier(tier: string): tier is NoteTier {
  return Object.hasOwn(en.jobNoteTier, tier);
}

/**
 * An event's message in the user's language where the platform wrote it from its catalogue
 * (`message_key`, apps/jobs/notes.py: its own notes, or the scheduler's phrase for a
 * preemption); anything else (a cluster's words, a key this build does not know) as the
 * server sent it.
 */
export function eventMessage(
  t: TFunction,
  event: { message: string; message_key: string; message_args: Record<string, string> },
): string {
  const key = event.message_key;
  if (key !== '' && !isJobNote(key)) {
    const said = [{ key, args: event.message_args }];
    return schedulerText(t, currentLanguage(), said, event.message);
  }
  if (!isJobNote(key)) return event.message;
  // Every placeholder of the catalogue named (i18next's types ask for the union's), then
  // the event's own values.
  const args = {
    owner: '',
    actor: '',
    nodes: '',
    tier: '',
    attempt: '',
    step: '',
    job: '',
    days: '',
    threshold: '',
    idle: '',
    peak: '',
    stop: '',
    busy: '',
    used: '',
    most: '',
    reason: '',
    held: '',
    limit: '',
    left: '',
  };
  Object.assign(args, event.message_args);
  if (isNoteTier(args.tier)) args.tier = t(`jobNoteTier.${args.tier}`);
  return t(`jobNote.${key}`, args);
}
