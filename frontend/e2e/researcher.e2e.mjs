// Researcher (bob, vision member): submits a training job with the wizard, watches it reach
// running through live updates, reads its curves and logs on the detail page, launches a
// notebook and opens it through the platform, then deploys an inference service and reads its
// traffic and autoscaling on the service page. E2E_RESEARCHER overrides the user.
import {
  apiCall,
  check,
  expectVisible,
  login,
  pickOption,
  runScenario,
  screenshot,
  TIMEOUT_MS,
} from './lib.mjs';

const user = process.env.E2E_RESEARCHER || 'bob';
const password = process.env.E2E_PASSWORD ?? '';

process.exitCode = await runScenario('researcher', async (page) => {
  await login(page, user, password);
  await page.goto(`${page.url().replace(/\/overview$/, '')}/jobs`);
  await expectVisible(
    page.getByTestId('connection-indicator').and(page.locator('[data-state="open"]')),
    'live connection indicator',
  );
  await page.getByRole('button', { name: 'Submit training job' }).click();

  const name = `e2e-train-${Date.now() % 100000}`;
  await page.getByLabel('Job name').fill(name);
  await page.getByLabel('Container image').fill('nvcr.io/nvidia/pytorch:24.05-py3');
  await page.getByLabel('Command').fill('torchrun train.py');
  await page.getByRole('button', { name: 'Next' }).click();

  await pickOption(page, 'Resource pool', '[title="a800-train"]');
  await pickOption(page, 'Accelerator model', '[title^="A800 ("]');
  await page.getByLabel('Replicas').first().fill('2');
  await page.getByLabel('Accelerators / replica').first().fill('4');
  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByRole('button', { name: 'Next' }).click();
  await expectVisible(page.getByTestId('submit-review'), 'the review step');
  await screenshot(page, 'researcher-wizard');
  await page.getByRole('button', { name: 'Submit job' }).click();

  await page
    .waitForURL((url) => /^\/jobs\/\d+$/.test(url.pathname), { timeout: TIMEOUT_MS })
    .catch(() => {
      throw new Error(`submit did not open the job detail (at ${page.url()})`);
    });
  const id = page.url().split('/').pop();
  // The simulated cluster starts the job within seconds; the websocket moves the tag.
  await expectVisible(
    page.getByTestId('job-summary').locator('[data-testid="job-state"][data-state="running"]'),
    `job ${id} reaching Running`,
    60_000,
  );
  await expectVisible(
    page.getByTestId('allocations-table').locator('tbody tr td', { hasText: '-' }),
    'replica placements',
  );
  await expectVisible(page.getByTestId('job-timeline'), 'the state timeline');
  // Curves (the simulated cluster reports metrics every few seconds) and the job's output.
  await expectVisible(page.getByTestId('curve-loss').locator('canvas'), 'the loss curve', 60_000);
  await expectVisible(page.getByTestId('kpi-loss'), 'the latest-loss KPI');
  const firstLine = page.getByTestId('job-logs').getByTestId('log-line').first();
  await expectVisible(firstLine, 'a line of the job output', 60_000);
  check(/simulated/i.test(await firstLine.innerText()), 'log lines come from the simulator');
  check(
    /simulated/i.test(await page.getByTestId('logs-source').innerText()),
    'the log source says simulated',
  );
  // What the job costs and what its GPUs do (accounting and the telemetry collector).
  const usage = page.getByTestId('job-usage');
  await expectVisible(usage.getByTestId('usage-reserved'), 'the GPU-hours the job reserved');
  await expectVisible(usage.getByTestId('usage-cost'), 'the cost of the job');
  const reserved = await usage.getByTestId('usage-reserved').innerText();
  check(
    /GPU-hours reserved\s*[\d.,]+/.test(reserved),
    `no reserved GPU-hours shown ("${reserved}")`,
  );
  // Ask the running job for a checkpoint: the simulated job saves one at its next step, and
  // the card says which (it looks again every 10 s). In one CI run the confirmation stayed
  // open after the click on its button, with the card at the window's edge under the fixed
  // header (cause not proven): the button is brought to the middle of the window first, and
  // the request is awaited, so a failure says whether it was ever sent.
  const requestButton = page.getByTestId('request-checkpoint');
  await requestButton.evaluate((el) => el.scrollIntoView({ block: 'center' }));
  await requestButton.click();
  const confirm = page
    .locator('.ant-popover:visible')
    .getByRole('button', { name: 'Request checkpoint' });
  await expectVisible(confirm, 'the checkpoint confirmation');
  /** @param {import('playwright-core').Request} r */
  const isAsk = (r) => r.method() === 'POST' && r.url().endsWith('/checkpoint/');
  const asked = page.waitForResponse((r) => isAsk(r.request()), { timeout: TIMEOUT_MS });
  const requested = page
    .waitForRequest(isAsk, { timeout: 5_000 })
    .then(() => true)
    .catch(() => false);
  await confirm.click();
  // Now and then (about one run in ten, in CI and locally; cause not found) the click left
  // the confirmation open and sent nothing. A person clicks again; so does the test, once,
  // and says so, while a confirmation that closed without sending still fails below.
  if (!(await requested) && (await confirm.isVisible())) {
    // What the confirmation looked like, for finding the cause one day.
    const state = await confirm.evaluate((button) => ({
      popover: button.closest('.ant-popover')?.className,
      button: button.className,
      focused: button.ownerDocument.activeElement?.textContent?.slice(0, 40),
    }));
    console.log(
      `researcher: the checkpoint confirmation needed a second click ${JSON.stringify(state)}`,
    );
    await confirm.click();
  }
  const answer = await asked;
  check(answer.ok(), `the checkpoint request was answered ${answer.status()}`);
  await expectVisible(page.getByText('Checkpoint requested'), 'the checkpoint request message');
  const served = page.getByTestId('checkpoint-request').getByText(/saved at step \d+$/);
  await expectVisible(served, 'the requested checkpoint saved', 60_000);
  const savedAt = await served.innerText();
  const savedStep = (savedAt.match(/step (\d+)$/) ?? [])[1] ?? '?';
  await expectVisible(
    page.getByTestId('job-checkpoints').getByRole('cell', { name: savedStep, exact: true }),
    `checkpoint step ${savedStep} in the job's checkpoint list`,
  );
  const path = await screenshot(page, 'researcher-job');

  // A next step of the job: the Submit page filled in from it, then the pipeline drawn.
  await page.getByTestId('submit-next-step').click();
  await expectVisible(page.getByTestId('next-step-of'), 'the next-step note on the Submit page');
  const image = await page.getByLabel('Container image').inputValue();
  check(image === 'nvcr.io/nvidia/pytorch:24.05-py3', `the next step's image is ${image}`);
  // Not the job's name with more after it: the list checks below find that name alone.
  await page.getByLabel('Job name').fill(`e2e-step-${Date.now() % 100000}`);
  await page.getByLabel('Command').fill('python eval.py');
  for (let step = 0; step < 3; step += 1) {
    await page.getByRole('button', { name: 'Next' }).click();
  }
  await expectVisible(page.getByTestId('submit-review'), "the next step's review");
  await page.getByRole('button', { name: 'Submit job' }).click();
  await page
    .waitForURL((url) => /^\/jobs\/\d+$/.test(url.pathname) && !url.pathname.endsWith(`/${id}`), {
      timeout: TIMEOUT_MS,
    })
    .catch(() => {
      throw new Error(`the next step did not open its page (at ${page.url()})`);
    });
  const stepId = page.url().split('/').pop();
  const boxes = page.getByTestId('pipeline-graph').getByTestId('pipeline-job');
  await expectVisible(boxes.and(page.locator(`[data-job-id="${id}"]`)), 'the job in the pipeline');
  check((await boxes.count()) === 2, `the pipeline of #${stepId} has ${await boxes.count()} jobs`);
  check(
    (await page.getByTestId('pipeline-edge').getAttribute('data-to')) === stepId,
    'an arrow from the job to its next step',
  );
  await page.getByRole('button', { name: 'Cancel job' }).click();
  await page.locator('.ant-popconfirm').getByRole('button', { name: 'Cancel job' }).click();
  await expectVisible(
    page.getByTestId('job-summary').locator('[data-testid="job-state"][data-state="cancelled"]'),
    `next step #${stepId} cancelled`,
  );

  await page.goto(page.url().replace(/\/jobs\/\d+$/, '/jobs'));
  await expectVisible(page.getByTestId('jobs-table').getByText(name), 'the job in the list');
  await screenshot(page, 'researcher-jobs');
  // The same list in Chinese (the choice is remembered per browser, so switch back after).
  await page.locator('header').getByText('中文', { exact: true }).click();
  await expectVisible(page.getByRole('heading', { name: '作业' }), 'the Chinese jobs page');
  await screenshot(page, 'researcher-jobs-zh');
  await page.locator('header').getByText('EN', { exact: true }).click();

  // Older jobs a page at a time (the demo history holds more than a page), then the new job
  // found by name, alone on its page.
  const table = page.getByTestId('jobs-table');
  await page.getByTestId('jobs-page-older').click();
  await expectVisible(page.getByTestId('jobs-page-page').getByText('Page 2'), 'the second page');
  await table.getByText(name).waitFor({ state: 'detached', timeout: TIMEOUT_MS });
  await page.getByRole('searchbox', { name: 'Search by name' }).fill(name);
  await page.keyboard.press('Enter');
  await expectVisible(table.getByText(name), 'the job found by its name');
  const rows = table.locator('tbody tr.ant-table-row');
  for (let waited = 0; (await rows.count()) !== 1; waited += 250) {
    check(waited < TIMEOUT_MS, `searching "${name}" did not leave the job alone in the list`);
    await page.waitForTimeout(250);
  }

  // A notebook, opened through the platform's proxy (no token in the browser).
  await page.goto(page.url().replace(/\/jobs$/, '/notebooks'));
  await page.getByRole('button', { name: 'New notebook' }).click();
  const notebook = `e2e-nb-${Date.now() % 100000}`;
  await page.getByLabel('Job name').fill(notebook);
  await pickOption(page, 'Resource pool', '[title="a800-train"]');
  await pickOption(page, 'Accelerator model', '[title="A800"]');
  await page.getByRole('button', { name: 'Launch' }).click();
  const open = page
    .getByTestId('notebooks-table')
    .locator('tr', { hasText: notebook })
    .getByTestId('notebook-open');
  await expectVisible(open, `notebook ${notebook} running with an Open link`, 60_000);
  const href = await open.getAttribute('href');
  check(href && /^\/notebooks\/\d+\/$/.test(href), `open link ${href}`);
  check((await open.getAttribute('target')) === '_blank', 'Open uses a new tab');
  await page.goto(new URL(href ?? '', page.url()).toString());
  await expectVisible(
    page.getByRole('heading', { name: 'Simulated notebook (Zhisuan simulated cluster)' }),
    'the notebook page through the proxy',
  );
  check(!/token=/.test(page.url()), 'no token in the notebook URL');
  await expectVisible(page.getByText('new, 20 GiB'), 'a first notebook gets a new home volume');
  await screenshot(page, 'researcher-notebook');

  // Stopped, then restarted with its files: the new notebook mounts the first one's home.
  const firstId = /\/notebooks\/(\d+)\//.exec(href ?? '')?.[1];
  await page.goto(new URL('/notebooks', page.url()).toString());
  const nbRows = page.getByTestId('notebooks-table').locator('tr', { hasText: notebook });
  await nbRows.getByRole('button', { name: 'Stop' }).click();
  await page.locator('.ant-popconfirm').getByRole('button', { name: 'Stop' }).click();
  const restart = nbRows.getByRole('button', { name: 'Restart' });
  await expectVisible(restart, `notebook ${notebook} stopped, with a Restart button`);
  await restart.click();
  const reopen = nbRows.getByTestId('notebook-open');
  await expectVisible(reopen, `the restart of ${notebook} running with an Open link`, 60_000);
  const again = await reopen.getAttribute('href');
  check(again && again !== href, `the restart opens at its own address (${again})`);
  await page.goto(new URL(again ?? '', page.url()).toString());
  await expectVisible(
    page.getByText(`kept from notebook #${firstId}`),
    "the restarted notebook mounts the first one's home volume",
  );

  // bob's demo sweep: its page lists the grid's four trials, the first two started as jobs.
  await page.goto(new URL('/sweeps', page.url()).toString());
  const sweepLink = page.getByTestId('sweeps-table').getByRole('link', { name: 'detr-lr' });
  await expectVisible(sweepLink, "bob's demo sweep detr-lr in the list");
  await sweepLink.click();
  const trials = page.getByTestId('sweep-results');
  await expectVisible(trials.getByRole('link', { name: 'detr-lr-1' }), 'trial 1 as a job link');
  const trialRows = await trials.locator('tr.ant-table-row').count();
  check(trialRows === 4, `the sweep shows its 4 trials (saw ${trialRows})`);
  await screenshot(page, 'researcher-sweep');

  // An inference service: deployed from the form, then its page fills with traffic samples
  // of the simulated replicas (every 10 s) and the autoscaler's decisions.
  await page.goto(new URL('/inference', page.url()).toString());
  await page.getByRole('button', { name: 'New service' }).click();
  const service = `e2e-svc-${Date.now() % 100000}`;
  await page.getByLabel('Service name').fill(service);
  await page.getByLabel('Model', { exact: true }).fill('s3://models/qwen2-7b');
  await pickOption(page, 'Resource pool', '[title="a800-train"]');
  await page.getByRole('button', { name: 'Deploy' }).click();
  const row = page.getByTestId('services-table').getByRole('link', { name: service });
  await expectVisible(row, `service ${service} in the list`);
  await row.click();
  const perReplica = page.getByTestId('gpu-per-replica');
  await expectVisible(perReplica, 'GPU use per replica from a traffic sample', 60_000);
  check(
    (await perReplica.getByRole('progressbar').count()) >= 1,
    'at least one replica reports GPU use',
  );
  // The history chart once it has two samples (a line, not a dot): its label counts them.
  const chart = page.getByTestId('inference-history').getByTestId('traffic-chart');
  let charted = 0;
  for (const deadline = Date.now() + 60_000; charted < 2 && Date.now() < deadline;) {
    const label =
      (await chart.getAttribute('aria-label', { timeout: 2000 }).catch(() => null)) ?? '';
    charted = Number(/last (\d+) samples/.exec(label)?.[1] ?? 0);
    if (charted < 2) await page.waitForTimeout(1000);
  }
  check(charted >= 2, `the traffic history chart shows two or more samples (saw ${charted})`);

  // A rolling update: a new model replaces the replica while the old one serves. Simulated
  // replicas load for cold_start_s (60 s by default), shortened through the API here.
  const serviceId = /\/inference\/(\d+)/.exec(page.url())?.[1];
  check(serviceId, `the service page's address names the service (${page.url()})`);
  await apiCall(page, 'PATCH', `/api/v1/tenants/vision/inference/services/${serviceId}/`, {
    data: { cold_start_s: 3 },
  });
  await page.getByRole('button', { name: 'Update' }).click();
  const update = page.getByRole('dialog');
  await update.getByLabel('Model', { exact: true }).fill('s3://models/qwen2-7b-v2');
  await update.getByRole('button', { name: 'Roll out' }).click();
  const revisions = page.getByTestId('revisions-table');
  const second = revisions.locator('tr', { hasText: '#2' });
  await expectVisible(second, 'revision 2 in the revisions table');
  await expectVisible(
    second.getByTestId('revision-serving'),
    'revision 2 serving once rolled out',
    90_000,
  );
  const first = await revisions
    .locator('tr', { hasText: '#1' })
    .getByTestId('revision-state')
    .textContent();
  check(first === 'Superseded', `revision 1 superseded after the rollout (saw ${first})`);
  const servicePath = await screenshot(page, 'researcher-inference');
  check(id, 'job id');
  return `job ${name} (#${id}) is running with curves and logs; a next step submitted from it and drawn in its pipeline; checkpoint request: ${savedAt}; sweep detr-lr with its 4 trials; notebook ${href} opened and restarted with its files at ${again}; service ${service} serving with GPU use per replica and rolled out to revision 2; screenshots ${path}, ${servicePath}`;
});
