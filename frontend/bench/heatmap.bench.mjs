// GPU heatmap render benchmark (issue 9): `npm run bench:heatmap` / `make bench-heatmap`.
//
// Builds bench/heatmap.html (the real GpuHeatmap + HeatmapStore, production React) with Vite,
// serves it locally, and in headless Chromium (same binary and flags as the e2e run) loads a
// keyframe of 1,000 and 10,000 GPUs, then feeds 60 deltas changing 10 % and 100 % of the cells.
// Per update it times JSON.parse of the socket message, store.apply, and the canvas paint of
// the changed cells; it also records requestAnimationFrame intervals while updates run.
//
//   --updates N   deltas per case (default 60)
//   --json FILE   also write the raw numbers
//   --screenshot FILE   save the 10,000-GPU heatmap as it looks after the last update
//   --baseline N  updates for the old ECharts heatmap, for comparison (default 20; 0 skips)
import react from '@vitejs/plugin-react';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { launchChromium } from '../e2e/lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const frontend = resolve(here, '..');
const FRAME_MS = 1000 / 60;

/** @param {string} name */
function option(name) {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
}
const updates = Number(option('--updates') ?? 60);
const jsonOut = option('--json');
const screenshotOut = option('--screenshot');
const baselineUpdates = Number(option('--baseline') ?? 20);

/** @param {number[]} values @param {number} q */
function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
}

/** @param {number} v */
const ms = (v) => v.toFixed(2);

async function buildPage() {
  const outDir = mkdtempSync(join(tmpdir(), 'zs-heatmap-bench-'));
  await build({
    root: frontend,
    configFile: false,
    logLevel: 'warn',
    plugins: [react()],
    build: {
      outDir,
      emptyOutDir: true,
      rollupOptions: { input: resolve(here, 'heatmap.html') },
    },
  });
  return outDir;
}

/** @param {string} root */
function serve(root) {
  /** @type {Record<string, string>} */
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    const file = resolve(root, `.${path}`);
    try {
      if (!file.startsWith(root)) throw new Error('outside');
      const body = readFileSync(file);
      response.writeHead(200, {
        'Content-Type': types[extname(file)] ?? 'application/octet-stream',
      });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolveServer) => {
    server.listen(0, '127.0.0.1', () => resolveServer(server));
  });
}

const outDir = await buildPage();
/** @type {import('node:http').Server} */
const server = /** @type {any} */ (await serve(outDir));
const address = server.address();
const port = typeof address === 'object' && address !== null ? address.port : 0;
const browser = await launchChromium();
/** @type {unknown[]} */
const raw = [];
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  /** @type {string[]} */
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`http://127.0.0.1:${port}/bench/heatmap.html`);
  await page.waitForFunction(() => 'runHeatmapBench' in globalThis);
  const version = browser.version();
  console.log(
    `GPU heatmap benchmark: Chromium ${version} (headless, --disable-gpu), ${updates} updates per case\n`,
  );
  console.log(
    '| GPUs | changed | canvas px | first paint ms | update+paint p50 | p95 | max | parse p50 | apply p50 | paint p50 | cells painted | frames > 16.7 ms | longest frame ms |',
  );
  console.log('|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const gpus of [1_000, 10_000]) {
    for (const changed of [0.1, 1]) {
      /** @type {any} */
      const result = await page.evaluate(
        (spec) => /** @type {any} */ (globalThis).runHeatmapBench(spec),
        {
          gpus,
          changed,
          updates,
          keep: gpus === 10_000 && changed === 1 && screenshotOut !== undefined,
        },
      );
      raw.push({ changed, ...result });
      /** @type {{parseMs: number, applyMs: number, paintMs: number, cellsPainted: number}[]} */
      const samples = result.samples;
      // What the quality bar calls render time per update: applying the delta and drawing it.
      const render = samples.map((s) => s.applyMs + s.paintMs);
      /** @type {number[]} */
      const frames = result.frameIntervals;
      const slow = frames.filter((f) => f > FRAME_MS + 1).length;
      console.log(
        `| ${gpus.toLocaleString('en')} | ${changed * 100} % | ${result.canvas.width}x${result.canvas.height} | ${ms(result.firstPaintMs)} | ${ms(quantile(render, 0.5))} | ${ms(quantile(render, 0.95))} | ${ms(Math.max(...render))} | ${ms(
          quantile(
            samples.map((s) => s.parseMs),
            0.5,
          ),
        )} | ${ms(
          quantile(
            samples.map((s) => s.applyMs),
            0.5,
          ),
        )} | ${ms(
          quantile(
            samples.map((s) => s.paintMs),
            0.5,
          ),
        )} | ${quantile(
          samples.map((s) => s.cellsPainted),
          0.5,
        )} | ${slow} of ${frames.length} | ${ms(Math.max(...frames))} |`,
      );
    }
  }
  if (baselineUpdates > 0) {
    console.log(
      `\nBaseline: the previous ECharts heatmap (series rebuilt with setOption + synchronous render), ${baselineUpdates} updates\n`,
    );
    console.log('| GPUs | changed | setOption+render p50 ms | p95 | max |');
    console.log('|---:|---:|---:|---:|---:|');
    for (const gpus of [1_000, 10_000]) {
      for (const changed of [0.1, 1]) {
        /** @type {number[]} */
        const times = await page.evaluate(
          (spec) => /** @type {any} */ (globalThis).runEchartsBaseline(spec),
          { gpus, changed, updates: baselineUpdates },
        );
        raw.push({ baseline: 'echarts', gpus, changed, times });
        console.log(
          `| ${gpus.toLocaleString('en')} | ${changed * 100} % | ${ms(quantile(times, 0.5))} | ${ms(quantile(times, 0.95))} | ${ms(Math.max(...times))} |`,
        );
      }
    }
  }
  if (errors.length > 0) throw new Error(`errors in the page: ${errors.join(' | ')}`);
  console.log(
    '\nupdate+paint = store.apply of the parsed delta + the canvas paint of changed cells (target < 16 ms at 10,000).',
  );
  console.log('parse = JSON.parse of the socket message (same main thread, listed apart).');
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(raw, null, 2));
  if (screenshotOut) {
    await page.mouse.move(400, 200);
    await page.screenshot({ path: resolve(screenshotOut), fullPage: true });
  }
} finally {
  await browser.close();
  server.close();
  rmSync(outDir, { recursive: true, force: true });
}
