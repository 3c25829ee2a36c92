// Runs every e2e/*.e2e.mjs one after the other (they share one server) and prints one
// closing line: `e2e: N passed, M failed`. Exit status 1 if anything failed.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const scripts = readdirSync(here)
  .filter((f) => f.endsWith('.e2e.mjs'))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort();

let passed = 0;
let failed = 0;
for (const script of scripts) {
  const run = spawnSync(process.execPath, [join(here, script)], {
    encoding: 'utf8',
    env: process.env,
  });
  const lines = `${run.stdout}`.split('\n');
  for (const line of lines) {
    if (!/^e2e: \d+ passed, \d+ failed$/.test(line) && line !== '') console.log(line);
  }
  if (run.stderr) process.stderr.write(run.stderr);
  const tally = lines
    .map((l) => /^e2e: (\d+) passed, (\d+) failed$/.exec(l))
    .find((m) => m !== null);
  if (tally && run.status === 0) {
    passed += Number(tally[1]);
    failed += Number(tally[2]);
  } else {
    failed += tally ? Math.max(1, Number(tally[2])) : 1;
    passed += tally ? Number(tally[1]) : 0;
  }
}
console.log(`e2e: ${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
