#!/usr/bin/env node
/**
 * Fails when a source line is longer than 140 characters, which Biome's formatter cannot fix for a
 * long string or comment. Checks what `npm run lint` checks: .ts, .mjs and .mts under src, adapters,
 * plugins, test, scripts, bench and fuzz.
 *
 * Lines written before the check came are counted per file in scripts/long-lines.json: a file may
 * keep that many until someone breaks them, never more; a file not listed may have none. The list
 * only shrinks: `--update` writes the counts as they are now, refusing to raise one (the first
 * `--update`, with no list yet, takes every file as it is).
 *
 *   node scripts/check-line-length.mjs            # fails on a file past its count, naming its lines
 *   node scripts/check-line-length.mjs --all      # every long line, listed or not
 *   node scripts/check-line-length.mjs --update   # lower the counts to what is left
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const FOLDERS = ['src', 'adapters', 'plugins', 'test', 'scripts', 'bench', 'fuzz'];
const BASELINE = join(ROOT, 'scripts', 'long-lines.json');
const MAX = 140;

function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'results' && entry.name !== 'out') yield* sources(path);
    } else if (/\.(ts|mjs|mts)$/.test(entry.name)) yield path;
  }
}

/** file → its lines over MAX, as `line (length)`. */
const long = new Map();
for (const folder of FOLDERS) {
  for (const file of sources(join(ROOT, folder))) {
    const lines = readFileSync(file, 'utf8').split('\n');
    for (const [i, line] of lines.entries()) {
      // Characters, not UTF-16 units: `→` and `é` count once, as an editor shows them.
      const length = [...line].length;
      if (length <= MAX) continue;
      const name = relative(ROOT, file);
      long.set(name, [...(long.get(name) ?? []), `${name}:${i + 1} (${length} characters)`]);
    }
  }
}
const allowed = existsSync(BASELINE) ? JSON.parse(readFileSync(BASELINE, 'utf8')) : {};
const total = [...long.values()].reduce((n, lines) => n + lines.length, 0);

if (process.argv.includes('--all')) {
  for (const lines of long.values()) for (const line of lines) console.log(line);
  console.log(`${total} line(s) over ${MAX} characters in ${long.size} file(s)`);
  process.exit(0);
}

const over = [...long].filter(([file, lines]) => lines.length > (allowed[file] ?? 0));
if (process.argv.includes('--update')) {
  // The first list takes every file as it is; after that, counts only come down.
  const refused = existsSync(BASELINE) ? over : [];
  if (refused.length > 0)
    console.error(`not raising the counts of ${refused.map(([f]) => f).join(', ')}: break their new long lines first`);
  const counts = Object.fromEntries(
    [...long]
      .map(([file, lines]) => [file, refused.some(([f]) => f === file) ? allowed[file] : lines.length])
      .filter(([, n]) => n > 0)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  writeFileSync(BASELINE, `${JSON.stringify(counts, null, 2)}\n`);
  console.log(
    `${relative(ROOT, BASELINE)}: ${Object.values(counts).reduce((a, b) => a + b, 0)} long line(s) left ` +
      `in ${Object.keys(counts).length} file(s)`,
  );
  process.exit(refused.length > 0 ? 1 : 0);
}

for (const [file, lines] of over) {
  console.error(`${file}: ${lines.length} line(s) over ${MAX} characters, ${allowed[file] ?? 0} allowed (scripts/long-lines.json):`);
  for (const line of lines) console.error(`  ${line}`);
}
if (over.length > 0) {
  console.error('Break the string or comment by hand (the formatter cannot); a line that only moved keeps its count.');
  process.exit(1);
}
console.log(
  `no new line over ${MAX} characters (${total} older ones left in ${long.size} file(s): node scripts/check-line-length.mjs --all)`,
);
