// Operator (admin): edits a quota beyond the pool's capacity and sees the server's validation
// error on the field; acknowledges an alert in the health inbox (a node agent's report raises
// it first, through the API); cordons a node from the node grid and puts it back; hovers a GPU
// on the live heatmap; replays the demo's jobs under two policies on the What-if page.
// E2E_OPERATOR overrides the user.
import {
  apiCall,
  check,
  CheckFailed,
  expectVisible,
  login,
  pickOption,
  runScenario,
  screenshot,
  TIMEOUT_MS,
} from './lib.mjs';

const user = process.env.E2E_OPERATOR || 'admin';
const password = process.env.E2E_PASSWORD ?? '';

/**
 * @typedef {{ id: number, name: string, cordoned: boolean, is_spare: boolean, health: string }} Node
 */

/**
 * The node agent's side: a token for `node`, then a report of thermal throttling (an
 * alert-only fault in the default catalogue). Returns the token, for the clean-up report.
 * @param {import('playwright-core').Page} page
 * @param {Node} node
 * @param {string} detail
 */
async function reportThrottling(page, node, detail) {
  const minted = await apiCall(page, 'POST', '/api/v1/health/node-tokens/', {
    data: { node: node.id },
  });
  await apiCall(page, 'POST', '/api/v1/health/report/', {
    token: minted.token,
    data: {
      node: node.name,
      results: [{ check: 'gpu_thermal', status: 'warn', faults: ['throttle'], detail }],
    },
  });
  return { id: /** @type {number} */ (minted.id), token: /** @type {string} */ (minted.token) };
}

/**
 * @param {import('playwright-core').Page} page
 * @returns {Promise<Node[]>}
 */
async function nodes(page) {
  const answer = await apiCall(page, 'GET', '/api/v1/health/nodes/?page_size=500');
  return /** @type {Node[]} */ (answer.results).sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Starts a what-if replay with the form as it is and waits for *its* result (the page may
 * still show an earlier replay's, on a server that ran this flow before).
 * @param {import('playwright-core').Page} page
 */
async function runReplay(page) {
  const posted = page.waitForResponse(
    (r) =>
      r.request().method() === 'POST' &&
      new URL(r.url()).pathname === '/api/v1/scheduling/what-if/',
  );
  await page.getByRole('button', { name: 'Run replay' }).click();
  const response = await posted;
  check(response.ok(), `starting a replay answered ${response.status()}`);
  const id = /** @type {number} */ ((await response.json()).id);
  const result = page
    .getByTestId('whatif-result')
    .filter({ hasText: new RegExp(`Replay #${id}(?!\\d)`) });
  await expectVisible(result, `the result of replay #${id}`, 60_000);
  return { id, result };
}

process.exitCode = await runScenario('operator', async (page) => {
  await login(page, user, password);

  // 1. Quota edit with a server-side validation error.
  await page.getByRole('link', { name: 'Quotas & Pools' }).click();
  const consoleCard = page.getByTestId('quota-console');
  await expectVisible(consoleCard.locator('tbody tr.ant-table-row'), 'the quota console');
  const input = consoleCard.locator('input[data-testid$="-guarantee"]').first();
  const testId = await input.getAttribute('data-testid');
  const id = (testId ?? '').split('-')[1];
  await input.fill('100000');
  await page.getByTestId(`quota-${id}-save`).click();
  const error = page.getByTestId(`quota-${id}-guarantee-error`);
  await expectVisible(error, 'the validation error under the guarantee field');
  const text = (await error.innerText()).trim();
  check(/but the pool has/.test(text), `unexpected validation message: ${text}`);
  const quotaShot = await screenshot(page, 'operator-quota-error');

  // 2. An alert arrives (agent report) and the operator acknowledges it in the inbox.
  const all = await nodes(page);
  const inService = all.filter((n) => !n.is_spare && !n.cordoned);
  check(inService.length >= 2, `need two nodes in service, found ${inService.length}`);
  const alerted = /** @type {Node} */ (inService[0]);
  const toCordon = /** @type {Node} */ (inService[inService.length - 1]);
  const detail = `e2e ${Date.now()}: GPU 3 thermal slowdown`;
  const agent = await reportThrottling(page, alerted, detail);
  let cordoned = false;
  try {
    const alerts = await apiCall(page, 'GET', '/api/v1/health/alerts/?page_size=100');
    const alert =
      /** @type {{ id: number, node_name: string, fault: string, acknowledged_at: string | null }[]} */ (
        alerts.results
      ).find(
        (a) => a.node_name === alerted.name && a.fault === 'throttle' && a.acknowledged_at === null,
      );
    check(alert, `the report did not raise an open throttle alert on ${alerted.name}`);

    await page.getByRole('link', { name: 'Health' }).click();
    const inbox = page.getByTestId('alert-inbox');
    const row = inbox.locator('tbody tr', { has: page.getByTestId(`ack-${alert.id}`) });
    await expectVisible(row, `the alert on ${alerted.name} in the inbox`);
    check((await row.innerText()).includes(detail), 'the alert row does not show the report');
    await page.getByTestId(`ack-${alert.id}`).click();
    await expectVisible(page.getByText('Alert acknowledged'), 'the acknowledgement message');
    await page
      .getByTestId(`ack-${alert.id}`)
      .waitFor({ state: 'detached', timeout: TIMEOUT_MS })
      .catch(() => {
        throw new CheckFailed('the acknowledge button stayed after acknowledging');
      });
    await expectVisible(
      inbox.locator('tbody tr', { hasText: detail }).getByText(/^Acknowledged /),
      'the acknowledged time on the alert row',
    );
    const alertShot = await screenshot(page, 'operator-alert-acknowledged');

    // 3. Cordon a node from the node grid (with confirmation), then return it to service.
    await expectVisible(page.getByTestId('node-grid'), 'the node health grid');
    const cell = page.getByTestId('node-cell').filter({ hasText: toCordon.name });
    await page.getByTestId(`cordon-${toCordon.name}`).click();
    await page.locator('.ant-popover:visible').getByRole('button', { name: 'Cordon' }).click();
    cordoned = true;
    await expectVisible(page.getByText(`${toCordon.name} cordoned`), 'the cordon message');
    await expectVisible(cell.getByText('Cordoned', { exact: true }), 'the Cordoned tag');
    await expectVisible(page.getByTestId(`uncordon-${toCordon.name}`), 'the uncordon button');
    const after = (await nodes(page)).find((n) => n.id === toCordon.id);
    check(after?.cordoned === true, `${toCordon.name} is not cordoned on the server`);
    const cordonShot = await screenshot(page, 'operator-cordon');
    await page.getByTestId(`uncordon-${toCordon.name}`).click();
    await expectVisible(page.getByText(`${toCordon.name} back in service`), 'the uncordon message');
    await expectVisible(page.getByTestId(`cordon-${toCordon.name}`), 'the cordon button again');
    cordoned = (await nodes(page)).find((n) => n.id === toCordon.id)?.cordoned ?? true;
    check(!cordoned, `${toCordon.name} is still cordoned on the server`);

    // 3b. The console's sections: the agent's token (it has reported), the seeded fault
    // catalogue, and a slow-node probe of the first pool run by the embedded worker.
    await page.getByRole('tab', { name: 'Node agents' }).click();
    await page.getByRole('searchbox', { name: 'Node name' }).fill(alerted.name);
    await page.getByRole('searchbox', { name: 'Node name' }).press('Enter');
    const tokenRow = page
      .getByTestId('node-tokens')
      .locator('tbody tr', { has: page.getByTestId(`revoke-${agent.id}`) });
    await expectVisible(tokenRow, `the agent token of ${alerted.name}`);
    const tokenText = await tokenRow.innerText();
    check(
      tokenText.includes('Active') && !tokenText.includes('Never'),
      `the token row says active and reported ("${tokenText.replace(/\s+/g, ' ')}")`,
    );
    await page.getByRole('tab', { name: 'Fault rules' }).click();
    const xid = page.getByTestId('rules-table').locator('tbody tr', { hasText: 'xid:79' });
    await expectVisible(xid, 'the seeded rule for xid:79');
    check(
      (await xid.innerText()).includes('Cordon and drain'),
      'the xid:79 rule does not say cordon and drain',
    );
    await page.getByRole('tab', { name: 'Slow-node probes' }).click();
    await page.getByRole('button', { name: 'Probe a pool' }).click();
    await pickOption(page, 'Pool');
    await page.getByRole('dialog').getByRole('button', { name: 'Start' }).click();
    const started = page.getByText(/^Probe run #\d+ started$/);
    await expectVisible(started, 'the probe started message');
    const probeId = ((await started.innerText()).match(/#(\d+)/) ?? [])[1];
    const probeRow = page.getByTestId('probe-runs').locator(`tr[data-row-key="${probeId}"]`);
    await expectVisible(
      probeRow.getByText('Done', { exact: true }),
      `probe run #${probeId} done`,
      60_000,
    );
    const probeText = (await probeRow.innerText()).replace(/\s+/g, ' ');
    check(
      /\d+ round\(s\); slow: none/.test(probeText),
      `the probe of a healthy demo pool finds no slow node ("${probeText}")`,
    );
    await probeRow.getByRole('button', { name: /expand row/i }).click();
    await expectVisible(
      page.getByTestId(`rounds-${probeId}`).getByText(/^Round 1: screen, reference [\d.]+ GB\/s$/),
      "the probe run's screening round",
    );
    const probeShot = await screenshot(page, 'operator-probe-run');

    // 4. The live GPU heatmap: streaming, and a tooltip for the GPU under the pointer.
    await page.getByRole('link', { name: 'Cluster' }).click();
    const heatmap = page.locator('[data-testid="gpu-heatmap"] canvas');
    await expectVisible(heatmap, 'the GPU heatmap');
    await expectVisible(
      page.getByTestId('heatmap-connection').and(page.locator('[data-state="open"]')),
      'the live telemetry connection',
    );
    // The connection opens before the first frame paints (and the canvas may resize when it
    // does), so hover until a GPU answers or the time is up, measuring the canvas each time.
    let tooltip = '';
    for (const deadline = Date.now() + TIMEOUT_MS; tooltip === '' && Date.now() < deadline;) {
      const box = await heatmap.boundingBox();
      check(box !== null, 'the heatmap canvas has no size');
      for (const [dx, dy] of [
        [12, 30],
        [40, 30],
        [12, 60],
        [6, 6],
      ]) {
        await page.mouse.move(box.x + (dx ?? 0), box.y + (dy ?? 0));
        const shown = page.getByTestId('heatmap-tooltip');
        if ((await shown.count()) > 0) {
          tooltip = (await shown.innerText()).trim();
          break;
        }
      }
      if (tooltip === '') await page.waitForTimeout(500);
    }
    check(/GPU \d/.test(tooltip), `no GPU tooltip when hovering the heatmap (got "${tooltip}")`);
    // Below it, the stored history the collector rolls up every 10 s (the page refetches
    // the last hour at that pace, so a server just started shows it within half a minute).
    const history = page.getByTestId('cluster-history');
    await expectVisible(
      history.getByRole('img', { name: 'History over the last 1 hour' }),
      'the cluster history chart',
      45_000,
    );
    const since = new Date(Date.now() - 3600_000).toISOString();
    const stored = await apiCall(
      page,
      'GET',
      `/api/v1/telemetry/history/?series=cluster&resolution=10&start=${encodeURIComponent(since)}`,
    );
    const newest = stored.points.at(-1);
    check(
      newest !== undefined && newest.gpus > 0 && typeof newest.extra.busy === 'number',
      `the cluster history has no point with GPUs and allocated GPUs (${JSON.stringify(newest)})`,
    );
    // The pool's topology: every server of the first pool as one square under its leaf, with
    // the counts the API gives (the demo's jobs move them, so compare the node count).
    const topologyCard = page.getByTestId('cluster-topology');
    await expectVisible(topologyCard.getByTestId('topology-free'), 'the topology summary');
    const pools = /** @type {{ id: number, capacity: { devices: number }[] }[]} */ (
      await apiCall(page, 'GET', '/api/v1/pools/')
    );
    const first = pools.find((p) => p.capacity.some((c) => c.devices > 0));
    check(first !== undefined, 'the demo has no pool with GPUs');
    const topo = await apiCall(page, 'GET', `/api/v1/pools/${first.id}/topology/`);
    const cells = topologyCard.locator('[role="img"][data-state]');
    const servers = topo.summary.nodes + topo.summary.spare_nodes;
    check(
      (await cells.count()) === servers,
      `the topology shows ${await cells.count()} servers, the API ${servers}`,
    );
    check(
      topo.summary.free + topo.summary.used + topo.summary.unavailable === topo.summary.devices,
      `topology counts do not add up: ${JSON.stringify(topo.summary)}`,
    );
    await screenshot(page, 'operator-cluster');

    // 5. A what-if replay of the demo's jobs under two policies, run by the embedded worker.
    await page.getByRole('link', { name: 'What-if' }).click();
    const form = page.getByRole('button', { name: 'Run replay' });
    await expectVisible(form, 'the what-if form');
    await page.getByRole('checkbox', { name: 'Volcano-like' }).uncheck();
    await page.getByRole('checkbox', { name: 'Best-fit' }).uncheck();
    await page.getByRole('checkbox', { name: 'Standard' }).uncheck();
    // On the cluster with four more servers in the first pool (the capacity question).
    await page.getByRole('button', { name: 'Grow or shrink a pool' }).click();
    await pickOption(page, 'Pool');
    // And with the first tenant quota's borrowing limit cut to none.
    await page.getByRole('button', { name: 'Change a quota' }).click();
    await pickOption(page, 'Quota');
    await page.getByRole('spinbutton', { name: 'Borrow' }).fill('0');
    // And 30% more arriving work (the load question).
    await page.getByRole('spinbutton', { name: /Arriving work/ }).fill('1.3');
    // And four servers of the first pool down for maintenance (the form's default window).
    await page.getByRole('button', { name: 'Plan maintenance' }).click();
    await pickOption(page, 'Maintenance of');
    const { id: changedRun, result } = await runReplay(page);
    const grown = (await result.locator('.ant-tag').allInnerTexts()).join(' ');
    check(/: \+4 nodes \(\+\d+ GPUs\)/.test(grown), `the what-if says what it grew ("${grown}")`);
    check(
      /: \d+ \+ \d+ → \d+ \+ 0/.test(grown),
      `the what-if says which quota it set ("${grown}")`,
    );
    check(
      /×1\.3: [1-9]\d* jobs added, 0 left out/.test(grown),
      `the what-if says how much work it added ("${grown}")`,
    );
    check(
      /: 4 servers from hour 24 for 8 h, drained/.test(grown),
      `the what-if says which servers it took down ("${grown}")`,
    );
    // The demo's week had two server outages, which the replay meets as the cluster did.
    const outages = (await result.innerText()).match(
      /\d+ outages \(\d+ drained\), [\d.]+ node-hours/,
    );
    check(
      outages?.[0] === '2 outages (1 drained), 20.0 node-hours' && grown.includes('replayed'),
      `the what-if replays the window's outages ("${outages?.[0]}"; "${grown}")`,
    );
    // The quota change binds Ours only (FIFO + spread is modelled without quotas): said so.
    check(
      (await result.getByTestId('whatif-quota-note').count()) === 1,
      'the what-if says which policies keep the quotas',
    );
    const heads = (await result.getByRole('columnheader').allInnerTexts()).map((h) => h.trim());
    check(
      heads.join('|') === 'Measure|Ours|FIFO + spread|As it happened',
      `what-if columns are ${heads.join(', ')}`,
    );
    const jobs = Number(
      (await result.locator('.ant-descriptions-item-content').nth(1).innerText()).trim(),
    );
    check(jobs > 0, `the what-if replayed ${jobs} jobs`);
    const chart = result.getByTestId('whatif-chart');
    await expectVisible(chart.locator('canvas'), 'the what-if allocation chart');
    check(
      (await chart.getAttribute('aria-label'))?.endsWith(
        'Ours, FIFO + spread, As it happened; shaded: 3 period(s) with a node out of service',
      ),
      `the what-if chart shows ${await chart.getAttribute('aria-label')}`,
    );
    const whatIfShot = await screenshot(page, 'operator-what-if');

    // 6. The same window on the cluster as it is, then the two replays side by side.
    await page.getByRole('button', { name: 'Remove this change', exact: true }).click();
    await page.getByRole('button', { name: 'Remove this quota change' }).click();
    await page.getByRole('button', { name: 'Remove this maintenance window' }).click();
    await page.getByRole('spinbutton', { name: /Arriving work/ }).fill('1');
    // And under the product's default preset too, which the demo's scheduler runs, with
    // every node healthy (what the outages cost).
    await page.getByRole('checkbox', { name: 'Standard' }).check();
    await page.getByRole('checkbox', { name: 'Replay node outages' }).uncheck();
    const { id: asItIsRun, result: latest } = await runReplay(page);
    await page.getByRole('checkbox', { name: `Compare replay #${asItIsRun}`, exact: true }).check();
    await page
      .getByRole('checkbox', { name: `Compare replay #${changedRun}`, exact: true })
      .check();
    const compare = page.getByTestId('whatif-compare');
    await expectVisible(compare, 'the replays side by side');
    const changed = (await compare.getByRole('row').nth(1).getByRole('cell').allInnerTexts()).map(
      (c) => c.trim(),
    );
    check(
      changed[0] === 'Changes' &&
        changed[1] === 'no outages' &&
        /\+4, quotas changed: 1, work ×1\.3, maintenance: 4 servers from hour 24/.test(changed[2]),
      `the comparison says what each replay changed (${changed.join(' | ')})`,
    );
    const compareShot = await screenshot(page, 'operator-what-if-compare');
    const liveHeads = (await latest.getByRole('columnheader').allInnerTexts()).map((h) =>
      h.replace(/\s+/g, ' ').trim(),
    );
    check(
      liveHeads.includes('Standard running now'),
      `the replay marks the policy the scheduler runs (${liveHeads.join(', ')})`,
    );
    return (
      `validation error shown ("${text}"); acknowledged the alert on ${alerted.name}; ` +
      `cordoned and uncordoned ${toCordon.name}; probe run #${probeId}: ${probeText}; ` +
      `heatmap tooltip "${tooltip.split('\n')[0]}"; ` +
      `what-if replayed ${jobs} jobs under two policies on ${grown}; ` +
      `compared it with the cluster as it is (${changed.slice(1).join(' vs ')}); ` +
      `screenshots ${quotaShot}, ${alertShot}, ${cordonShot}, ${probeShot}, ${whatIfShot}, ${compareShot}`
    );
  } finally {
    // Leave the cluster as the other flows expect it: the fault cleared, the node in service.
    await apiCall(page, 'POST', '/api/v1/health/report/', {
      token: agent.token,
      data: { node: alerted.name, results: [{ check: 'gpu_thermal', status: 'ok', faults: [] }] },
    }).catch(() => undefined);
    await apiCall(page, 'DELETE', `/api/v1/health/node-tokens/${agent.id}/`).catch(() => undefined);
    if (cordoned) {
      await apiCall(page, 'POST', `/api/v1/health/nodes/${toCordon.id}/uncordon/`).catch(
        () => undefined,
      );
    }
  }
});
