// Generates src/api/schema.d.ts (TypeScript types for every API path) from the backend's
// OpenAPI schema, ../openapi/schema.yaml (drf-spectacular output, committed by the backend).
//
//   node scripts/gen-api.mjs          write src/api/schema.d.ts
//   node scripts/gen-api.mjs --check  fail if src/api/schema.d.ts is not what the schema gives
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const input = join(root, '..', 'openapi', 'schema.yaml');
const committed = join(root, 'src', 'api', 'schema.d.ts');
const check = process.argv.includes('--check');

if (!existsSync(input)) {
  console.error(`gen:api: ${input} does not exist; the backend writes it (make schema).`);
  process.exit(1);
}

/** @param {string} output */
function generate(output) {
  const bin = join(root, 'node_modules', '.bin', 'openapi-typescript');
  const result = spawnSync(bin, [input, '--output', output, '--alphabetize'], {
    stdio: check ? 'pipe' : 'inherit',
    cwd: root,
  });
  if (result.error || result.status !== 0) {
    console.error(`gen:api: openapi-typescript failed: ${result.error?.message ?? ''}`);
    if (result.stderr) process.stderr.write(result.stderr);
    process.exit(1);
  }
}

if (!check) {
  console.log(`gen:api: ${relative(root, input)} -> ${relative(root, committed)}`);
  generate(committed);
  process.exit(0);
}

const scratch = mkdtempSync(join(tmpdir(), 'zhisuan-gen-api-'));
try {
  const fresh = join(scratch, 'schema.d.ts');
  generate(fresh);
  const same =
    existsSync(committed) && readFileSync(fresh, 'utf8') === readFileSync(committed, 'utf8');
  if (!same) {
    console.error(
      `gen:api --check: ${relative(root, committed)} is out of date with ` +
        `${relative(root, input)}; run \`npm run gen:api\` and commit the result.`,
    );
    process.exit(1);
  }
  console.log(`gen:api --check: ${relative(root, committed)} matches the schema`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
