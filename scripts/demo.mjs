#!/usr/bin/env node
/**
 * `npm run demo`: copies the sample inbox to ./hyperwatch-demo/inbox (with the producers'
 * .ready sentinels), runs the watcher once over it on the embedded hyperd, then shows the table.
 * The third sample has a bad value on purpose: it lands in failed/ with its .error report.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const demo = join(root, 'hyperwatch-demo');
const inbox = join(demo, 'inbox');
const database = join(demo, 'demo.hyper');
const bin = join(root, 'dist', 'cli', 'hyperwatch.js'); // package.json `bin`

rmSync(demo, { recursive: true, force: true });
mkdirSync(inbox, { recursive: true });
for (const name of readdirSync(join(root, 'examples', 'inbox')).sort()) {
  copyFileSync(join(root, 'examples', 'inbox', name), join(inbox, name));
  writeFileSync(join(inbox, `${name}.ready`), '');
}
const run = (args) => spawnSync(process.execPath, [bin, ...args], { stdio: 'inherit' }).status;

console.log(`$ hyperwatch watch ${inbox} --table orders --database ${database} --once`);
run(['watch', inbox, '--table', 'orders', '--database', database, '--once']);
console.log(`\n$ hyperwatch query --database ${database} "SELECT * FROM orders ORDER BY order_id"`);
run(['query', '--database', database, 'SELECT * FROM orders ORDER BY order_id']);
console.log(`\nfailed/: ${readdirSync(join(inbox, 'failed')).join(', ')}`);
const report = readdirSync(join(inbox, 'failed')).find((n) => n.endsWith('.error'));
if (report) console.log(readFileSync(join(inbox, 'failed', report), 'utf8'));
console.log(`To keep watching (Ctrl-C stops): node dist/cli/hyperwatch.js watch ${inbox} --table orders --database ${database}`);
