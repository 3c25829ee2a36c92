import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { setLanguage } from '../../lib/i18n';
import { type StubResponse, stubFetch } from '../../test/fetchStub';
import { BOB, makeJob, page, POOLS, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';
import { BASE, REVISION, SERVICE } from './testFixtures';

const NO_QUOTA = [{ key: 'noQuota', args: { tenant: 'vision', model: 'A800', pool: 'p' } }];
const NO_QUOTA_EN = "tenant 'vision' has no A800 quota in pool 'p'";

const ROLLING = {
  ...SERVICE,
  model_uri: 's3://models/qwen2-7b-v3',
  revision: 3,
  serving_revision: 2,
  rollout_state: 'rolling',
  updated_replicas: 1,
  desired_replicas: 2,
  rollout_reason: NO_QUOTA_EN,
  rollout_detail: NO_QUOTA,
};

function detailRoutes(
  service: StubResponse | StubResponse[],
  revisions: StubResponse | StubResponse[] = page([REVISION]),
  session = sessionOf(BOB),
) {
  return {
    'GET /api/v1/auth/session/': session,
    [`GET ${BASE}5/`]: service,
    [`GET ${BASE}5/metrics/`]: page([]),
    [`GET ${BASE}5/decisions/`]: page([]),
    [`GET ${BASE}5/revisions/`]: revisions,
  };
}

const revisionText = async () => (await screen.findByTestId('service-revision')).textContent;

describe('rolling updates of a service', () => {
  describe('the revision line', () => {
    it('says the revision a service runs when nothing rolls out', async () => {
      stubFetch(detailRoutes({ status: 200, body: SERVICE }));
      renderApp('/inference/5');
      expect(await revisionText()).toBe('Revision 1');
      expect(screen.queryByTestId('rollout-progress')).toBeNull();
    });

    it('says how far a rollout got and why it has less surge room, in both languages', async () => {
      stubFetch(detailRoutes({ status: 200, body: ROLLING }));
      renderApp('/inference/5');
      expect(await revisionText()).toBe(
        'Revision 3 · rolling out: 1 of 2 replicas on revision 3 (serving revision 2 until then)' +
          ` · ${NO_QUOTA_EN}`,
      );
      await act(() => setLanguage('zh'));
      await waitFor(() => {
        expect(screen.getByTestId('service-revision').textContent).toBe(
          '版本 3 · 滚动更新中：2 个副本中已有 1 个运行版本 3（在此之前仍由版本 2 提供服务）' +
            ' · 租户 “vision” 在资源池 “p” 中没有 A800 配额',
        );
      });
    });

    it('says what a waiting rollout waits for, in the scheduler’s words', async () => {
      const waiting = {
        ...ROLLING,
        rollout_state: 'waiting',
        updated_replicas: 0,
        rollout_reason: NO_QUOTA_EN,
        rollout_detail: NO_QUOTA,
      };
      stubFetch(detailRoutes({ status: 200, body: waiting }));
      renderApp('/inference/5');
      expect(await revisionText()).toBe(
        `Revision 3 · waiting for room for a surge replica: ${NO_QUOTA_EN}`,
      );
      await act(() => setLanguage('zh'));
      await waitFor(() => {
        expect(screen.getByTestId('service-revision').textContent).toBe(
          '版本 3 · 正在等待容纳超额副本的资源：租户 “vision” 在资源池 “p” 中没有 A800 配额',
        );
      });
    });

    it('says when a rollout failed and was not rolled back', async () => {
      stubFetch(detailRoutes({ status: 200, body: { ...ROLLING, rollout_state: 'failed' } }));
      renderApp('/inference/5');
      expect(await revisionText()).toBe(
        'Revision 3 · did not roll out; update the model or roll back',
      );
    });

    it('keeps the English of a reason this build cannot say, and says when it finishes', async () => {
      await setLanguage('zh');
      const odd = {
        ...ROLLING,
        rollout_state: 'waiting',
        rollout_reason: 'a reason from a newer server',
        rollout_detail: [{ key: 'fromTheFuture', args: {} }],
      };
      stubFetch(
        detailRoutes([
          { status: 200, body: odd },
          { status: 200, body: { ...ROLLING, rollout_state: 'finishing' } },
        ]),
      );
      const { queryClient } = renderApp('/inference/5');
      expect(await revisionText()).toBe(
        '版本 3 · 正在等待容纳超额副本的资源：a reason from a newer server',
      );
      await act(() => queryClient.invalidateQueries({ queryKey: ['inference', 'vision', 5] }));
      await waitFor(() => {
        expect(screen.getByTestId('service-revision').textContent).toBe(
          '版本 3 · 正在归还超额副本占用的资源',
        );
      });
    });

    it('reads the revisions again when the rollout moves on', async () => {
      const done = { ...ROLLING, rollout_state: '', serving_revision: 3, updated_replicas: 0 };
      const { requests } = stubFetch(
        detailRoutes(
          [
            { status: 200, body: ROLLING },
            { status: 200, body: done },
          ],
          [
            page([{ ...REVISION, number: 3, state: 'rolling', finished_at: null }]),
            page([{ ...REVISION, number: 3 }]),
          ],
        ),
      );
      const { queryClient } = renderApp('/inference/5');
      const table = await screen.findByTestId('revisions-table');
      expect(await within(table).findByText('Rolling out')).toBeTruthy();
      // The service's own refetch sees the rollout end: the revisions follow at once.
      await act(() =>
        queryClient.refetchQueries({ queryKey: ['inference', 'vision', 5], exact: true }),
      );
      expect(await within(table).findByText('Complete')).toBeTruthy();
      expect(requests.filter((r) => r.path === `${BASE}5/revisions/`)).toHaveLength(2);
      expect(await revisionText()).toBe('Revision 3');
    });
  });

  describe('updating the model', () => {
    it('sends only what changed, shows a refused field on it, and then rolls out', async () => {
      const user = userEvent.setup();
      const updated = {
        ...SERVICE,
        model_uri: 's3://models/qwen2-7b-v2',
        revision: 2,
        rollout_state: 'rolling',
      };
      const { requests } = stubFetch({
        ...detailRoutes(
          [
            { status: 200, body: SERVICE },
            { status: 200, body: updated },
          ],
          [
            page([REVISION]),
            page([
              {
                ...REVISION,
                number: 2,
                model_uri: 's3://models/qwen2-7b-v2',
                state: 'rolling',
                finished_at: null,
              },
              REVISION,
            ]),
          ],
        ),
        [`PATCH ${BASE}5/`]: [
          {
            status: 400,
            body: {
              detail: 'Invalid input.',
              errors: {
                model_uri: ['Use an s3://, gs://, oss://, hf://, pvc:// or http(s):// URI.'],
              },
            },
          },
          { status: 200, body: updated },
        ],
      });
      renderApp('/inference/5');
      await user.click(await screen.findByRole('button', { name: /Update$/ }));
      const dialog = await screen.findByRole('dialog');
      expect(within(dialog).getByTestId('update-hint').textContent).toContain(
        'up to 1 surge replica(s) start before old ones stop (max surge), and at most 0 may be missing',
      );
      const image = within(dialog).getByLabelText('Runtime');
      const model = within(dialog).getByLabelText('Model');
      expect((image as HTMLInputElement).value).toBe('vllm/vllm-openai:v0.6.3');
      expect((model as HTMLInputElement).value).toBe('s3://models/qwen2-7b');
      const rollOut = within(dialog).getByRole('button', { name: 'Roll out' });

      // Nothing changed: nothing to send.
      await user.click(rollOut);
      expect(
        await within(dialog).findByText(
          'Change the runtime image, the model, the port or a probe to make a new revision.',
        ),
      ).toBeTruthy();
      expect(requests.filter((r) => r.method === 'PATCH')).toEqual([]);

      fireEvent.change(model, { target: { value: 'models/qwen2-7b-v2' } });
      await user.click(rollOut);
      expect(
        await within(dialog).findByText(
          'Use an s3://, gs://, oss://, hf://, pvc:// or http(s):// URI.',
        ),
      ).toBeTruthy();
      expect(model.getAttribute('aria-invalid')).toBe('true');

      fireEvent.change(model, { target: { value: ' s3://models/qwen2-7b-v2 ' } });
      await user.click(rollOut);
      expect(await screen.findByText('Rolling out revision 2.')).toBeTruthy();
      expect(requests.filter((r) => r.method === 'PATCH').map((r) => r.body)).toEqual([
        { model_uri: 'models/qwen2-7b-v2' },
        { model_uri: 's3://models/qwen2-7b-v2' },
      ]);
      // The service and its revisions are read again: the new one rolls out.
      await waitFor(() => {
        expect(screen.getByTestId('service-revision').textContent).toBe(
          'Revision 2 · rolling out: 0 of 3 replicas on revision 2 (serving revision 1 until then)',
        );
      });
      const table = screen.getByTestId('revisions-table');
      expect(await within(table).findByText('#2')).toBeTruthy();
      await waitFor(() => {
        expect(screen.queryByRole('dialog')).toBeNull();
      });
    });

    it('rolls out a new port or probe, and opens them when the server refuses one', async () => {
      const user = userEvent.setup();
      const updated = { ...SERVICE, port: 9000, revision: 2, rollout_state: 'rolling' };
      const { requests } = stubFetch({
        ...detailRoutes([
          { status: 200, body: SERVICE },
          { status: 200, body: updated },
        ]),
        [`PATCH ${BASE}5/`]: [
          {
            status: 400,
            body: {
              detail: 'Invalid input.',
              errors: { readiness_path: ["An HTTP path starting with '/'."] },
            },
          },
          { status: 200, body: updated },
        ],
      });
      renderApp('/inference/5');
      expect((await screen.findByTestId('service-settings')).textContent).toBe(
        'port 8000 · readiness /health · liveness /health · probes from 30 s, every 10 s',
      );
      await user.click(await screen.findByRole('button', { name: /Update$/ }));
      const dialog = await screen.findByRole('dialog');
      await user.click(within(dialog).getByText('Port and probes'));
      const port = within(dialog).getByLabelText('Port');
      const readiness = within(dialog).getByLabelText('Readiness path');
      expect((port as HTMLInputElement).value).toBe('8000');
      fireEvent.change(readiness, { target: { value: 'ready' } });
      await user.click(within(dialog).getByText('Port and probes')); // closed again
      expect(
        within(dialog)
          .getByText('Port and probes')
          .closest('[aria-expanded]')
          ?.getAttribute('aria-expanded'),
      ).toBe('false');
      await user.click(within(dialog).getByRole('button', { name: 'Roll out' }));
      // Refused on a field of the closed section: it opens, with the error on the field.
      expect(await within(dialog).findByText("An HTTP path starting with '/'.")).toBeTruthy();
      expect(readiness.getAttribute('aria-invalid')).toBe('true');
      const header = within(dialog).getByText('Port and probes').closest('[aria-expanded]');
      expect(header?.getAttribute('aria-expanded')).toBe('true');
      fireEvent.change(readiness, { target: { value: '/health' } });
      await user.clear(port);
      await user.type(port, '9000');
      await user.click(within(dialog).getByRole('button', { name: 'Roll out' }));
      expect(await screen.findByText('Rolling out revision 2.')).toBeTruthy();
      expect(requests.filter((r) => r.method === 'PATCH').map((r) => r.body)).toEqual([
        { readiness_path: 'ready' },
        { port: 9000 },
      ]);
      await waitFor(() => {
        expect(screen.getByTestId('service-settings').textContent).toContain('port 9000');
      });
    });

    it.each([
      ['a viewer', { ...SERVICE }, 'viewer'],
      ['an ended service', { ...SERVICE, state: 'cancelled' }, 'member'],
    ] as const)('is not offered to %s', async (_, service, role) => {
      const session = sessionOf({
        ...BOB,
        memberships: [{ tenant: { id: 1, slug: 'vision', name: 'Vision Lab' }, role }],
      });
      const earlier = { ...REVISION, number: 1, state: 'superseded' };
      const current = { ...REVISION, number: 2, model_uri: 's3://models/other' };
      stubFetch(
        detailRoutes(
          { status: 200, body: { ...service, revision: 2, serving_revision: 2 } },
          page([current, earlier]),
          session,
        ),
      );
      renderApp('/inference/5');
      const table = await screen.findByTestId('revisions-table');
      expect(await within(table).findByText('#1')).toBeTruthy();
      expect(screen.queryByRole('button', { name: /Update$/ })).toBeNull();
      expect(within(table).queryByRole('button', { name: /Roll back/ })).toBeNull();
    });

    it('is offered to any member who may write, not only the owner', async () => {
      stubFetch(detailRoutes({ status: 200, body: { ...SERVICE, owner: 'carol' } }));
      renderApp('/inference/5');
      expect(await screen.findByRole('button', { name: /Update$/ })).toBeTruthy();
      // Stopping stays the owner's (or an admin's).
      expect(screen.queryByRole('button', { name: /Stop service/ })).toBeNull();
    });
  });

  describe('the revisions', () => {
    // #1 served, #2 failed to roll out, #3 rolled back to #1's pair automatically.
    const CURRENT = { ...SERVICE, revision: 3, serving_revision: 3 };
    const REVISIONS = [
      {
        ...REVISION,
        number: 3,
        created_by: null,
        rollback_of: 1,
        created_at: '2026-11-30T02:00:00Z',
        // the server's English; the page says the catalogue's sentence in the reader's language
        message: 'automatic rollback (as the server wrote it)',
        message_key: 'rolloutAutoRollback',
        message_args: { revision: 2 },
      },
      {
        ...REVISION,
        number: 2,
        runtime_image: 'vllm/vllm-openai:v0.6.4',
        model_uri: 's3://models/qwen2-7b-v2',
        state: 'failed',
        created_at: '2026-11-30T01:00:00Z',
        message: 'ProgressDeadlineExceeded',
      },
      { ...REVISION, state: 'superseded' },
    ];
    const rowOf = (table: HTMLElement, number: number) => {
      const row = within(table).getByText(`#${number}`).closest('tr');
      if (row === null) throw new Error(`no row for #${number}`);
      return row;
    };

    it('lists them and rolls back to an earlier one that serves something else', async () => {
      const user = userEvent.setup();
      const { requests } = stubFetch({
        ...detailRoutes({ status: 200, body: CURRENT }, page(REVISIONS)),
        [`POST ${BASE}5/rollback/`]: [
          {
            status: 400,
            body: {
              detail: 'Invalid input.',
              errors: {
                revision: [
                  "The service already runs that revision's image, model, port and probes.",
                ],
              },
            },
          },
          {
            status: 200,
            body: { ...CURRENT, revision: 4, rollout_state: 'rolling' },
          },
        ],
      });
      renderApp('/inference/5');
      const table = await screen.findByTestId('revisions-table');
      await within(table).findByText('#3');
      const three = rowOf(table, 3);
      expect(within(three).getByText('automatic')).toBeTruthy();
      expect(within(three).getByText('rollback to #1')).toBeTruthy();
      expect(within(three).getByTestId('revision-serving').textContent).toBe('Serving');
      expect(
        within(three).getByText('automatic rollback: revision 2 did not roll out'),
      ).toBeTruthy();
      const two = rowOf(table, 2);
      expect(within(two).getByTestId('revision-state').textContent).toBe('Failed');
      expect(within(two).getByText('bob')).toBeTruthy();
      expect(within(two).queryByTestId('revision-serving')).toBeNull();
      // Not the current revision, nor one that serves the same pair as now.
      expect(within(three).queryByRole('button', { name: /Roll back/ })).toBeNull();
      expect(within(rowOf(table, 1)).queryByRole('button', { name: /Roll back/ })).toBeNull();
      expect(within(table).getAllByRole('button', { name: /Roll back/ })).toHaveLength(1);

      const rollBack = within(two).getByRole('button', { name: /Roll back/ });
      await user.click(rollBack);
      expect(requests.filter((r) => r.method === 'POST')).toEqual([]);
      const confirm = async () => {
        const tip = await screen.findByRole('tooltip');
        expect(within(tip).getByText(/Roll back to revision 2\?/)).toBeTruthy();
        await user.click(within(tip).getByRole('button', { name: 'Roll back' }));
      };
      await confirm();
      // Refused: the toast says why.
      expect(
        await screen.findByText(
          "The service already runs that revision's image, model, port and probes.",
        ),
      ).toBeTruthy();
      await user.click(rollBack);
      await confirm();
      expect(await screen.findByText('Rolling back to revision 2 as revision 4.')).toBeTruthy();
      expect(requests.filter((r) => r.method === 'POST').map((r) => [r.path, r.body])).toEqual([
        [`${BASE}5/rollback/`, { revision: 2 }],
        [`${BASE}5/rollback/`, { revision: 2 }],
      ]);
    });

    it('offers a revision that differs only in its port or probes, and says them', async () => {
      const earlier = {
        ...REVISION,
        state: 'superseded',
        settings: { ...REVISION.settings, port: 9000, readiness_path: '/ready' },
      };
      const now = {
        ...REVISION,
        number: 2,
        message: 'x',
        message_key: 'revisionSettings',
        message_args: { changes: 'port 9000 → 8000, readiness_path /ready → /health' },
      };
      stubFetch(
        detailRoutes(
          { status: 200, body: { ...SERVICE, revision: 2, serving_revision: 2 } },
          page([now, earlier]),
        ),
      );
      renderApp('/inference/5');
      const table = await screen.findByTestId('revisions-table');
      await within(table).findByText('#2');
      expect(
        within(table)
          .getAllByTestId('revision-settings')
          .map((e) => e.textContent),
      ).toEqual([
        'port 8000 · readiness /health · liveness /health · probes from 30 s, every 10 s',
        'port 9000 · readiness /ready · liveness /health · probes from 30 s, every 10 s',
      ]);
      expect(
        within(rowOf(table, 2)).getByText(
          'changed port 9000 → 8000, readiness_path /ready → /health',
        ),
      ).toBeTruthy();
      expect(within(rowOf(table, 2)).queryByRole('button', { name: /Roll back/ })).toBeNull();
      expect(within(rowOf(table, 1)).getByRole('button', { name: /Roll back/ })).toBeTruthy();
    });

    it('labels states and who made them in Chinese', async () => {
      await setLanguage('zh');
      stubFetch(detailRoutes({ status: 200, body: CURRENT }, page(REVISIONS)));
      renderApp('/inference/5');
      const table = await screen.findByTestId('revisions-table');
      await within(table).findByText('#3');
      expect(
        within(table)
          .getAllByTestId('revision-state')
          .map((e) => e.textContent),
      ).toEqual(['已完成', '失败', '已被取代']);
      expect(within(rowOf(table, 3)).getByText('自动')).toBeTruthy();
      expect(within(rowOf(table, 3)).getByText('回滚至 #1')).toBeTruthy();
      expect(within(rowOf(table, 2)).getByRole('button', { name: /回滚/ })).toBeTruthy();
    });

    it('names the serving revision only in a list read for the service as it is now', async () => {
      vi.useFakeTimers({ shouldAdvanceTime: true });
      try {
        const v2 = { runtime_image: SERVICE.runtime_image, model_uri: 's3://models/qwen2-7b-v2' };
        const rolling = {
          ...SERVICE,
          ...v2,
          revision: 2,
          rollout_state: 'rolling',
          updated_replicas: 1,
        };
        const done = { ...SERVICE, ...v2, revision: 2, serving_revision: 2 };
        const second = (state: string) => ({ ...REVISION, ...v2, number: 2, state });
        let release: (() => void) | undefined;
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        stubFetch(
          detailRoutes(
            [
              { status: 200, body: rolling },
              { status: 200, body: done },
            ],
            [
              page([second('rolling'), REVISION]),
              { ...page([second('complete'), { ...REVISION, state: 'superseded' }]), gate },
            ],
          ),
        );
        renderApp('/inference/5');
        const table = await screen.findByTestId('revisions-table');
        await within(table).findByText('#2');
        expect(within(rowOf(table, 1)).getByTestId('revision-serving')).toBeTruthy();
        // The service ends its rollout; its revisions are still being read.
        await act(() => vi.advanceTimersByTimeAsync(10_000));
        await waitFor(() => {
          expect(screen.getByTestId('service-revision').textContent).toBe('Revision 2');
        });
        expect(within(table).queryByTestId('revision-serving')).toBeNull();
        release?.();
        await waitFor(() => {
          expect(within(rowOf(table, 2)).getByTestId('revision-serving')).toBeTruthy();
        });
        expect(within(rowOf(table, 1)).getByTestId('revision-state').textContent).toBe(
          'Superseded',
        );
      } finally {
        vi.useRealTimers();
      }
    });
  });

  describe('on the job’s timeline', () => {
    const event = (id: number, reason: string, key: string, args: object, message: string) => ({
      id,
      created_at: `2026-11-30T00:0${id}:00Z`,
      from_state: '',
      to_state: '',
      reason,
      message,
      message_key: key,
      message_args: args,
    });
    const model = 's3://models/qwen2-7b-v2';
    const image = 'vllm/vllm-openai:v0.6.4';
    const EVENTS = [
      event(1, 'RolloutStarted', 'rolloutStarted', { revision: 2, image, model }, 'x'),
      event(2, 'RolloutWaiting', 'rolloutWaiting', { revision: 2, why: NO_QUOTA }, 'x'),
      event(3, 'RolloutFailed', 'rolloutFailed', { revision: 2, why: 'deadline exceeded' }, 'x'),
      event(
        4,
        'RolloutStarted',
        'rolloutRollback',
        { of: 1, revision: 3, image: 'vllm/vllm-openai:v0.6.3', model: 's3://models/qwen2-7b' },
        'x',
      ),
      event(5, 'RolloutComplete', 'rolloutComplete', { revision: 3 }, 'x'),
      event(6, 'RolloutPending', 'rolloutPending', { revision: 4 }, 'x'),
    ];

    const jobRoutes = () => ({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/tenants/vision/jobs/30/': {
        status: 200,
        body: makeJob({ id: 30, kind: 'inference', state: 'queued' }),
      },
      'GET /api/v1/tenants/vision/jobs/30/events/': { status: 200, body: EVENTS },
    });

    it('labels the rollout events and says their notes', async () => {
      stubFetch(jobRoutes());
      renderApp('/jobs/30');
      const timeline = await screen.findByTestId('job-timeline');
      expect(Array.from(timeline.querySelectorAll('strong'), (e) => e.textContent)).toEqual([
        'Rollout started',
        'Rollout waiting for room',
        'Rollout failed',
        'Rollout started',
        'Rollout complete',
        'Rollout waits for the service to start',
      ]);
      for (const text of [
        `rolling out revision 2: image ${image}, model ${model}`,
        `revision 2 waits for room for a surge replica: ${NO_QUOTA_EN}`,
        'revision 2 did not roll out: deadline exceeded',
        'rolling back to revision 1 as revision 3: image vllm/vllm-openai:v0.6.3, model s3://models/qwen2-7b',
        'revision 3 serves on every replica',
        'revision 4 takes effect when the service starts',
      ]) {
        expect(within(timeline).getByText(text)).toBeTruthy();
      }
    });

    it('says them in Chinese', async () => {
      await setLanguage('zh');
      stubFetch(jobRoutes());
      renderApp('/jobs/30');
      const timeline = await screen.findByTestId('job-timeline');
      expect(Array.from(timeline.querySelectorAll('strong'), (e) => e.textContent)).toEqual([
        '开始滚动更新',
        '滚动更新等待资源',
        '滚动更新失败',
        '开始滚动更新',
        '滚动更新完成',
        '滚动更新待服务启动后生效',
      ]);
      for (const text of [
        `开始滚动更新到版本 2：镜像 ${image}，模型 ${model}`,
        '版本 2 正在等待容纳超额副本的资源：租户 “vision” 在资源池 “p” 中没有 A800 配额',
        '版本 2 未能完成滚动更新：deadline exceeded',
        '回滚到版本 1，作为新版本 3：镜像 vllm/vllm-openai:v0.6.3，模型 s3://models/qwen2-7b',
        '版本 3 已在所有副本上提供服务',
        '版本 4 将在服务启动时生效',
      ]) {
        expect(within(timeline).getByText(text)).toBeTruthy();
      }
    });
  });
});
