import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { JobEvent } from '../../lib/apiTypes';
import { setLanguage } from '../../lib/i18n';
import { makeJob } from '../../test/fixtures';
import { EventDetail, StateReason } from './JobReasons';

function event(overrides: Partial<JobEvent>): JobEvent {
  return {
    id: 1,
    created_at: '2026-11-30T00:00:00Z',
    from_state: '',
    to_state: '',
    reason: '',
    message: '',
    message_key: '',
    message_args: {},
    ...overrides,
  };
}

const REQUEUED = event({
  id: 3,
  from_state: 'preempted',
  to_state: 'queued',
  reason: 'Requeued',
  message: 'after preemption',
  message_key: 'afterPreemption',
});

describe('job reasons', () => {
  it('translates the reason and the platform’s own message', async () => {
    await setLanguage('zh');
    render(<EventDetail event={REQUEUED} />);
    expect(screen.getByText('重新排队 · 被抢占后')).toBeTruthy();
  });

  it('fills a note’s values in, the topology tier translated too', async () => {
    await setLanguage('zh');
    const placed = event({
      to_state: 'admitted',
      reason: 'Admitted',
      message: 'placed on 2 node(s), tier leaf',
      message_key: 'placed',
      message_args: { nodes: '2', tier: 'leaf' },
    });
    render(<EventDetail event={placed} />);
    expect(screen.getByText('已放置到 2 个节点，拓扑层级：叶交换机')).toBeTruthy();
  });

  it('says an idle-GPU warning with its values', async () => {
    await setLanguage('zh');
    const warned = event({
      reason: 'IdleWarning',
      message: 'GPUs below 5% for 1 h 05 min (peak 3%); stops at 2026-12-06 04:00 UTC ...',
      message_key: 'idleWarning',
      message_args: { threshold: '5', idle: '1 h 05 min', peak: '3', stop: '2026-12-06 04:00' },
    });
    render(<EventDetail event={warned} />);
    expect(
      screen.getByText(
        'GPU 利用率低于 5% 已持续 1 h 05 min（峰值 3%）；若不选择继续运行，将于 2026-12-06 04:00 UTC 停止',
        { exact: false },
      ),
    ).toBeTruthy();
  });

  it('says the scheduler’s reason for a preemption', async () => {
    await setLanguage('zh');
    const preempted = event({
      to_state: 'preempted',
      reason: 'Preempted',
      message: "preempted by job 42 (P1, tenant 'nlp'), which needs 8 A800 in pool 'train'; ...",
      message_key: 'preemptedBy',
      message_args: {
        job: '42',
        priority: '1',
        tenant: 'nlp',
        devices: '8',
        model: 'A800',
        pool: 'train',
        victimPriority: '5',
      },
    });
    render(<EventDetail event={preempted} />);
    expect(
      screen.getByText(
        '被作业 42（P1，租户 “nlp”）抢占，该作业需要资源池 “train” 中的 8 张 A800；P5 作业须为 P0-P2 让路',
      ),
    ).toBeTruthy();
  });

  it('keeps a message from elsewhere, or with a key this build does not know, as sent', async () => {
    await setLanguage('zh');
    const cluster = event({ to_state: 'running', reason: 'Running', message: 'pods ready' });
    const newer = event({ reason: 'Later', message: 'a newer note', message_key: 'fromTheFuture' });
    render(
      <>
        <EventDetail event={cluster} />
        <EventDetail event={newer} />
      </>,
    );
    expect(screen.getByText('pods ready')).toBeTruthy();
    expect(screen.getByText('a newer note')).toBeTruthy();
  });

  it('leaves out a reason that only repeats the state heading it', () => {
    const running = event({ to_state: 'running', reason: 'Running', message: 'pods ready' });
    render(<EventDetail event={running} />);
    expect(screen.getByText('pods ready')).toBeTruthy();
    expect(screen.queryByText(/Running/)).toBeNull();
  });

  it('shows a reason this build does not know as sent', () => {
    const odd = event({ to_state: 'failed', reason: 'OperatorKilled', message: 'by hand' });
    render(<EventDetail event={odd} />);
    expect(screen.getByText('OperatorKilled · by hand')).toBeTruthy();
  });

  it('explains the current state from the event that brought the job there', () => {
    const job = makeJob({ state: 'queued', state_reason: 'after preemption' });
    const earlier = event({ id: 1, to_state: 'queued', reason: 'Submitted', message: 'x' });
    render(<StateReason job={job} events={[earlier, REQUEUED]} />);
    expect(screen.getByTestId('state-reason').textContent).toBe(
      'Back in the queue · after preemption',
    );
  });

  it('translates the current state’s note in Chinese', async () => {
    await setLanguage('zh');
    const job = makeJob({ state: 'queued', state_reason: 'after preemption' });
    render(<StateReason job={job} events={[REQUEUED]} />);
    expect(screen.getByTestId('state-reason').textContent).toBe('重新排队 · 被抢占后');
  });

  it('says why a job that starts after others was released or cancelled', async () => {
    const released = event({ id: 4, reason: 'Released', message_key: 'afterMet' });
    const message = 'job #13 (train-base) failed, so this job, which starts after it, never will';
    const dropped = event({
      id: 5,
      from_state: 'queued',
      to_state: 'cancelled',
      reason: 'DependencyFailed',
      message,
      message_key: 'afterFailed',
      message_args: { job: 13, name: 'train-base' },
    });
    const job = makeJob({ state: 'cancelled', state_reason: message });
    const view = render(
      <>
        <EventDetail event={released} />
        <StateReason job={job} events={[released, dropped]} />
      </>,
    );
    expect(
      screen.getByText('the jobs it starts after have succeeded; it joins the queue'),
    ).toBeTruthy();
    expect(screen.getByTestId('state-reason').textContent).toBe(
      `A job it starts after did not succeed · ${message}`,
    );
    view.unmount();
    await setLanguage('zh');
    render(
      <>
        <EventDetail event={released} />
        <StateReason job={job} events={[released, dropped]} />
      </>,
    );
    expect(screen.getByText('它所等待的前序作业均已成功结束；进入排队')).toBeTruthy();
    expect(screen.getByTestId('state-reason').textContent).toBe(
      '前序作业未成功 · 作业 #13（train-base）失败，在其之后开始的本作业将不会运行',
    );
  });

  it('falls back to the server text while the events load', () => {
    const job = makeJob({ state: 'failed', state_reason: 'XID 79; no retries left' });
    render(<StateReason job={job} events={undefined} />);
    expect(screen.getByText('XID 79; no retries left')).toBeTruthy();
  });
});
