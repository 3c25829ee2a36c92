import { Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import type { Job, JobEvent } from '../../lib/apiTypes';
import { eventMessage, reasonLabel } from './reasons';

/** Joins the translated reason with the server's own sentence, skipping what says nothing new. */
function detail(label: string, message: string, skip: string): string {
  return [label === skip ? '' : label, message].filter((part) => part !== '').join(' · ');
}

/** The line under a timeline entry: why and the server's message, both translated where known. */
export function EventDetail({ event }: { event: JobEvent }) {
  const { t } = useTranslation();
  const state = event.to_state
    ? t(`jobState.${event.to_state as Job['state']}`, { defaultValue: event.to_state })
    : '';
  // A state change is headed by its state; an event without one by its reason already.
  const message = eventMessage(t, event);
  const text = event.to_state ? detail(reasonLabel(t, event.reason), message, state) : message;
  if (text === '') return null;
  return (
    <div>
      <Typography.Text type="secondary">{text}</Typography.Text>
    </div>
  );
}

/**
 * Why the job is in its state: the reason of the event that brought it there, translated,
 * then the server's detail (`state_reason`; translated when it is the event's catalogue note).
 */
export function StateReason({ job, events }: { job: Job; events: JobEvent[] | undefined }) {
  const { t } = useTranslation();
  const last = events?.findLast((e) => e.to_state === job.state);
  if (last === undefined) return <>{job.state_reason || '—'}</>;
  const label = reasonLabel(t, last.reason);
  // state_reason is that event's message (or its reason when it had none): translate it
  // like the timeline does.
  let message = job.state_reason;
  if (message === last.reason) message = '';
  else if (message === last.message) message = eventMessage(t, last);
  return <span data-testid="state-reason">{detail(label, message, '')}</span>;
}
