/**
 * The load modes on hyperd, against the same statements typed by hand on the same files:
 *
 *   node --import tsx bench/modes.ts [--table-rows 10000000] [--upsert-rows 100000]
 *     [--replace-rows 1000000] [--small-upserts 1000]
 *
 * - upsert: a file of `upsert-rows` rows (half of them keys the table has) into a table of
 *   `table-rows` rows, by the watcher (drop → committed), then by hand: the file COPYed into a
 *   staging table and committed, then `DELETE ... WHERE EXISTS` + `INSERT ... SELECT` in one
 *   transaction (what the watcher does on Hyper, without its ledger row and fence);
 * - replace: a file of `replace-rows` rows over the table, by the watcher, then by hand (`DELETE` +
 *   `COPY` in one transaction); the table is seeded again before each;
 * - fragmentation: `small-upserts` upserts of 100-row files into the table, then the .hyper
 *   file's size and a full scan's time before and after, and after a rewrite of the database
 *   (`CREATE DATABASE ... FROM`).
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { openWatcher } from '../src/index.ts';
import { quoteIdent, quoteLiteral } from '../src/columns/sql.ts';
import { createDatabase, type Server, startServer, withSession } from './lib/server.ts';

const { values: args } = parseArgs({
  options: {
    'table-rows': { type: 'string', default: '10000000' },
    'upsert-rows': { type: 'string', default: '100000' },
    'replace-rows': { type: 'string', default: '1000000' },
    'small-upserts': { type: 'string', default: '1000' },
  },
});
const tableRows = Number(args['table-rows']);
const upsertRows = Number(args['upsert-rows']);
const replaceRows = Number(args['replace-rows']);
const smallUpserts = Number(args['small-upserts']);

const log = (message: string) => process.stderr.write(`[modes ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** Rows `from`..`to` as CSV with a header: id, a text, a number that says which file. */
function rowsCsv(from: number, to: number, tag: number): string {
  const lines = ['id,name,amount'];
  for (let id = from; id <= to; id++) lines.push(`${id},n${id},${tag}`);
  return `${lines.join('\n')}\n`;
}

async function timed<T>(fn: () => Promise<T>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** Drops `name` into `dir` (the protocol's way) and waits until the watcher committed `count` files. */
async function dropAndWait(dir: string, name: string, text: string, handle: Awaited<ReturnType<typeof openWatcher>>, count: number) {
  await writeFile(join(dir, `.${name}.tmp`), text);
  const { rename } = await import('node:fs/promises');
  await rename(join(dir, `.${name}.tmp`), join(dir, name));
  await writeFile(join(dir, `${name}.ready`), '');
  while (handle.stats.filesIngested + handle.stats.filesFailed < count) await new Promise((r) => setTimeout(r, 2));
  if (handle.stats.filesFailed > 0) throw new Error(JSON.stringify(handle.stats.lastError));
}

async function seed(server: Server, database: string, table: string): Promise<void> {
  await withSession(server, database, async (sql) => {
    await sql.unsafe(`DROP TABLE IF EXISTS ${quoteIdent(table)}`);
    await sql.unsafe(`CREATE TABLE ${quoteIdent(table)} (id BIGINT, name TEXT, amount BIGINT)`);
    await sql.unsafe(`INSERT INTO ${quoteIdent(table)} SELECT i, 'n' || i, 0 FROM generate_series(1, ${tableRows}) AS g(i)`);
  });
}

/** The statements only, in a session already open on the database (opening one attaches the database). */
async function byHandUpsert(server: Server, database: string, table: string, path: string): Promise<number> {
  const t = quoteIdent(table);
  return withSession(server, database, async (sql) => {
    await sql.unsafe('SELECT 1');
    const ms = await timed(async () => {
      await sql.unsafe('DROP TABLE IF EXISTS stage_by_hand');
      await sql.unsafe('CREATE TABLE stage_by_hand (id BIGINT, name TEXT, amount BIGINT)');
      await sql.unsafe(`COPY stage_by_hand FROM ${quoteLiteral(path)} WITH (FORMAT csv, HEADER true)`);
      await sql.begin(async (tx) => {
        await tx.unsafe(`DELETE FROM ${t} t WHERE EXISTS (SELECT 1 FROM stage_by_hand s WHERE s.id = t.id)`);
        await tx.unsafe(`INSERT INTO ${t} (id, name, amount) SELECT id, name, amount FROM stage_by_hand`);
      });
      await sql.unsafe('DROP TABLE stage_by_hand');
    });
    return ms;
  });
}

async function byHandReplace(server: Server, database: string, table: string, path: string): Promise<number> {
  return withSession(server, database, async (sql) => {
    await sql.unsafe('SELECT 1');
    return timed(() =>
      sql.begin(async (tx) => {
        await tx.unsafe(`DELETE FROM ${quoteIdent(table)}`);
        await tx.unsafe(`COPY ${quoteIdent(table)} FROM ${quoteLiteral(path)} WITH (FORMAT csv, HEADER true)`);
      }),
    );
  });
}

async function scanMs(server: Server, database: string, table: string): Promise<number> {
  return withSession(server, database, async (sql) => {
    await sql.unsafe(`SELECT SUM(amount) FROM ${quoteIdent(table)}`);
    const runs: number[] = [];
    for (let i = 0; i < 5; i++)
      runs.push(await timed(() => sql.unsafe(`SELECT SUM(amount), COUNT(DISTINCT id) FROM ${quoteIdent(table)}`)));
    return runs.sort((a, b) => a - b)[2]!;
  });
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(os.tmpdir(), 'hyperwatch-modes-bench-'));
  const server = await startServer();
  const database = join(work, 'modes.hyper');
  try {
    await createDatabase(server, database);
    const open = (dir: string, mode: 'upsert' | 'replace') =>
      openWatcher(dir, 'facts', { endpoint: server.endpoint, database, mode, ...(mode === 'upsert' ? { key: 'id' } : {}) });
    const { mkdir } = await import('node:fs/promises');

    log(`seeding ${tableRows} rows`);
    await seed(server, database, 'facts');
    const half = Math.floor(upsertRows / 2);
    const upsertText = rowsCsv(tableRows - half + 1, tableRows + upsertRows - half, 1);
    const upsertPath = join(work, 'upsert.csv');
    await writeFile(upsertPath, upsertText);
    const inbox = join(work, 'inbox');
    await mkdir(inbox);
    let handle = await open(inbox, 'upsert');
    const watcherUpsert = await timed(() => dropAndWait(inbox, 'u1.csv', upsertText, handle, 1));
    await handle.stop();
    // Each from the same table: seeded again.
    await seed(server, database, 'facts');
    const handUpsert = await byHandUpsert(server, database, 'facts', upsertPath);
    console.log(
      `upsert of ${upsertRows} rows into ${tableRows}: watcher ${watcherUpsert.toFixed(0)} ms, by hand ${handUpsert.toFixed(0)} ms`,
    );

    const replaceText = rowsCsv(1, replaceRows, 2);
    const replacePath = join(work, 'replace.csv');
    await writeFile(replacePath, replaceText);
    await seed(server, database, 'facts');
    const inbox2 = join(work, 'inbox2');
    await mkdir(inbox2);
    handle = await open(inbox2, 'replace');
    const watcherReplace = await timed(() => dropAndWait(inbox2, 'r1.csv', replaceText, handle, 1));
    await handle.stop();
    await seed(server, database, 'facts');
    const handReplace = await byHandReplace(server, database, 'facts', replacePath);
    console.log(`replace by a ${replaceRows}-row file: watcher ${watcherReplace.toFixed(0)} ms, by hand ${handReplace.toFixed(0)} ms`);

    if (smallUpserts > 0) {
      await seed(server, database, 'facts');
      const sizeBefore = (await stat(database)).size;
      const scanBefore = await scanMs(server, database, 'facts');
      const inbox3 = join(work, 'inbox3');
      await mkdir(inbox3);
      handle = await open(inbox3, 'upsert');
      const started = performance.now();
      for (let i = 0; i < smallUpserts; i++) {
        const from = 1 + ((i * 7919) % Math.max(1, tableRows - 100));
        await dropAndWait(inbox3, `s${String(i).padStart(5, '0')}.csv`, rowsCsv(from, from + 99, 3), handle, i + 1);
      }
      const perFile = (performance.now() - started) / smallUpserts;
      await handle.stop();
      const sizeAfter = (await stat(database)).size;
      const scanAfter = await scanMs(server, database, 'facts');
      const rewritten = join(work, 'rewritten.hyper');
      await withSession(server, '', (sql) => sql.unsafe(`CREATE DATABASE ${quoteIdent(rewritten)} FROM ${quoteIdent(database)}`));
      const sizeRewritten = (await stat(rewritten)).size;
      const scanRewritten = await scanMs(server, rewritten, 'facts');
      const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
      console.log(
        `${smallUpserts} upserts of 100 rows into ${tableRows}: ${perFile.toFixed(1)} ms a file; ` +
          `.hyper ${mb(sizeBefore)} → ${mb(sizeAfter)} (rewritten: ${mb(sizeRewritten)}); ` +
          `full scan ${scanBefore.toFixed(0)} → ${scanAfter.toFixed(0)} ms (rewritten: ${scanRewritten.toFixed(0)} ms)`,
      );
    }
  } finally {
    await server.stop();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
