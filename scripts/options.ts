/**
 * Writes what the option table (src/options/table.ts) gives into the README's options table and the
 * watcher settings of schema/hyperwatch.config.schema.json; with --check, writes nothing and exits 1
 * when either differs (test/src/options/options.test.ts runs the same check).
 *
 *   npm run options            # after adding or changing a setting
 *   npm run options -- --check
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { formatJson, withOptionsTable, withWatcherSettings } from '../src/options/docs.ts';
import { SCHEMA_FILE } from '../src/serve/config.ts';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');

/** Each file the table writes, as it is and as the table gives it. */
export function optionDocuments(root = ROOT): { path: string; now: string; wanted: string }[] {
  const readme = join(root, 'README.md');
  const schema = join(root, SCHEMA_FILE);
  const readmeText = readFileSync(readme, 'utf8');
  const schemaText = readFileSync(schema, 'utf8');
  return [
    { path: readme, now: readmeText, wanted: withOptionsTable(readmeText) },
    { path: schema, now: schemaText, wanted: `${formatJson(withWatcherSettings(JSON.parse(schemaText) as Record<string, unknown>))}\n` },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const stale = optionDocuments().filter((d) => d.now !== d.wanted);
  for (const d of stale) {
    if (check) console.error(`${d.path} is not what src/options/table.ts gives: run npm run options`);
    else writeFileSync(d.path, d.wanted);
  }
  if (!check) console.log(stale.length === 0 ? 'up to date' : `wrote ${stale.map((d) => d.path).join(', ')}`);
  process.exit(check && stale.length > 0 ? 1 : 0);
}
