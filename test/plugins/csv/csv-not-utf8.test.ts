/**
 * A CSV file that is not UTF-8 fails, naming its line, and lands nothing: also where the database
 * parses it itself. hyperd's own CSV reader lands `2024-01\xFF\xFF1 02:41:39` in a TIMESTAMP
 * column as `1900-01-01 01:39:00`, without an error (test/fixtures/csv-timestamp-invalid-utf8.csv: the file the fuzzer found),
 * so the watcher checks the bytes first (plugins/csv/utf8-check.ts). Files well formed, with a
 * character cut by the check's chunks, land whole.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHyperAdapter } from '../../../adapters/db/hyper/index.ts';
import { createPostgresAdapter } from '../../../adapters/db/postgres/index.ts';
import { openWatcher } from '../../../src/api.ts';
import { dropFile } from '../../../src/producer/drop.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import type { DbAdapter } from '../../../src/types.ts';
import { failedEntries, waitFor } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { type PostgresServer, startPostgres } from '../../helpers/postgres.ts';
import { ROOT } from '../../helpers/proc.ts';
import { CHECK_CHUNK_BYTES } from '../../../plugins/csv/utf8-check.ts';

const FOUND = readFileSync(join(ROOT, 'test', 'fixtures', 'csv-timestamp-invalid-utf8.csv'));
/** The found file without its damaged row: what made the table (`at TIMESTAMP`) in the fuzzer's run. */
const CLEAN = Buffer.from(
  FOUND.toString('latin1')
    .split('\n')
    .filter((line) => !line.includes('\xff'))
    .join('\n'),
  'latin1',
);

/** A file of `rows` rows `id,label`, each label holding `é`, one of them across the end of the check's first chunk. */
function bigFile(rows: number, damageAtRow?: number): Buffer {
  const lines = ['id,label'];
  for (let i = 0; i < rows; i++) lines.push(`${i},${'x'.repeat(40)}é${i}`);
  const text = Buffer.from(`${lines.join('\n')}\n`);
  // Shift the text so that an é (2 bytes) starts at the last byte of the first MiB.
  const at = text.indexOf('é', CHECK_CHUNK_BYTES - 64);
  // The padding row `-1,<pad>\n` comes before it: 4 bytes besides the pad.
  const pad = 'x'.repeat(CHECK_CHUNK_BYTES - 1 - at - 4);
  const header = Buffer.from('id,label\n');
  let out = Buffer.concat([header, Buffer.from(`-1,${pad}\n`), text.subarray(header.length)]);
  assert.equal(out.subarray(CHECK_CHUNK_BYTES - 1, CHECK_CHUNK_BYTES + 1).toString(), 'é', 'a character across the first chunk');
  if (damageAtRow !== undefined) {
    const start = out.indexOf(`\n${damageAtRow},`) + 1;
    out = Buffer.concat([
      out.subarray(0, start + String(damageAtRow).length + 1),
      Buffer.from([0xff]),
      out.subarray(start + String(damageAtRow).length + 1),
    ]);
  }
  return out;
}

const servers: { name: string; db: (root: string) => DbAdapter }[] = [];
let pg: PostgresServer | undefined;

describe('CSV files that are not UTF-8', () => {
  const tmp = useTempDir('hyperwatch-not-utf8-');
  before(async () => {
    pg = await startPostgres();
  });
  after(async () => {
    await pg?.stop();
  });
  servers.push(
    { name: 'hyperd', db: (root) => createHyperAdapter({ database: join(root, 'test.hyper') }) },
    { name: 'PostgreSQL', db: () => createPostgresAdapter({ url: pg!.url }) },
  );

  for (const server of servers) {
    it(`on ${server.name}: the fuzzer's file fails naming line 161 in a group of small files, its neighbours land`, async () => {
      const inbox = await tmp.dir(`found-${server.name}`);
      const table = `found_${server.name.toLowerCase()}`;
      const db = server.db(tmp.path());
      const first = await openWatcher(inbox, table, { db, registry: new WatcherRegistry() });
      try {
        await dropFile(inbox, 'seed.csv', CLEAN);
        await waitFor(() => first.stats.filesIngested === 1, 'the clean file');
      } finally {
        await first.stop();
      }
      // Ready together before the next start: its first sweep loads them as one group.
      for (const name of ['b.csv', 'c.csv', 'd.csv']) await dropFile(inbox, name, name === 'c.csv' ? FOUND : CLEAN);
      const handle = await openWatcher(inbox, table, { db, registry: new WatcherRegistry() });
      try {
        await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 3, 'the three files');
      } finally {
        await handle.stop();
      }
      const pool = await db.openPool({ maxConnections: 1 });
      try {
        const [row] = await pool.query<{ n: string | number; old: string | number }>(
          `SELECT COUNT(*) AS n, SUM(CASE WHEN "at" < TIMESTAMP '2000-01-01 00:00:00' THEN 1 ELSE 0 END) AS old FROM ${table}`,
        );
        assert.deepEqual([Number(row!.n), Number(row!.old)], [3 * 299, 0], 'three clean files, and no 1900 timestamp');
      } finally {
        await pool.close();
        await db.close();
      }
      assert.deepEqual(await failedEntries(inbox), ['c.csv', 'c.csv.error', 'c.csv.ready']);
      const report = JSON.parse(await readFile(join(inbox, 'failed', 'c.csv.error'), 'utf8')) as {
        code: string;
        message: string;
        line: number;
        hint: string;
      };
      assert.equal(report.line, 161, report.message);
      assert.equal(report.code, 'CSV_NOT_UTF8', report.message);
      assert.match(report.message, /c\.csv: invalid UTF-8 sequence in line 161/);
      assert.match(report.hint, /CSV UTF-8|iconv|--encoding/);
    });

    it(`on ${server.name}: a character across the check's chunks lands whole; a bad byte past them fails the file`, async () => {
      const inbox = await tmp.dir(`big-${server.name}`);
      const table = `big_${server.name.toLowerCase()}`;
      const db = server.db(tmp.path());
      const handle = await openWatcher(inbox, table, { db, registry: new WatcherRegistry() });
      const rows = 120_000;
      try {
        await dropFile(inbox, 'whole.csv', bigFile(rows));
        await waitFor(() => handle.stats.filesIngested === 1, 'the whole file');
        await dropFile(inbox, 'damaged.csv', bigFile(rows, 100_000));
        await waitFor(() => handle.stats.filesFailed === 1, 'the damaged file');
      } finally {
        await handle.stop();
      }
      const pool = await db.openPool({ maxConnections: 1 });
      try {
        const [row] = await pool.query<{ n: string | number; accented: string | number }>(
          `SELECT COUNT(*) AS n, SUM(CASE WHEN label LIKE '%é%' THEN 1 ELSE 0 END) AS accented FROM ${table}`,
        );
        assert.deepEqual(
          [Number(row!.n), Number(row!.accented)],
          [rows + 1, rows],
          'every row of the whole file, and none of the damaged one',
        );
      } finally {
        await pool.close();
        await db.close();
      }
      const report = JSON.parse(await readFile(join(inbox, 'failed', 'damaged.csv.error'), 'utf8')) as { message: string; line: number };
      // Line 1 the header, line 2 the padding row, then row i on line i + 3.
      assert.equal(report.line, 100_003, report.message);
    });
  }
});
