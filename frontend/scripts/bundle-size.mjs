// Reports the gzip size of what the first page load fetches (the entry script, its
// modulepreloads and stylesheets named in dist/index.html) and of every lazy chunk.
// Run after `npm run build`.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const html = readFileSync(join(dist, 'index.html'), 'utf8');
const initial = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)].map(
  (m) => m[1] ?? '',
);

/** @param {string} file */
const gzipKb = (file) => gzipSync(readFileSync(join(dist, file))).length / 1024;
/** @param {string} name @param {number} kb */
const line = (name, kb) => `${kb.toFixed(1).padStart(8)} kB  ${name}`;

let initialJs = 0;
let initialCss = 0;
console.log('initial load (gzip):');
for (const file of initial) {
  const kb = gzipKb(file);
  if (file.endsWith('.js')) initialJs += kb;
  else initialCss += kb;
  console.log(line(file, kb));
}
console.log(line('= initial JS', initialJs));
console.log(line('= initial CSS', initialCss));

console.log('lazy chunks (gzip):');
const lazy = readdirSync(join(dist, 'assets'))
  .map((name) => `assets/${name}`)
  .filter((file) => file.endsWith('.js') && !initial.includes(file));
for (const file of lazy.sort((a, b) => gzipKb(b) - gzipKb(a))) {
  console.log(line(file, gzipKb(file)));
}
