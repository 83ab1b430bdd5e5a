/**
 * The CSV conformance suite's machinery: files written at test time by other tools and locales
 * (DuckDB, PostgreSQL's COPY, Node's Intl, hand-written reports), each dropped into a real watcher
 * with the dialect options a user would give, and what landed compared value for value with what
 * the producer meant. Each case's file lands three ways in one watcher run: as written, gzip-
 * compressed, and (where the case gives them) as several small files that share a transaction.
 * The ambiguous cases (a day/month date with no order given) fail with the `--date-style` hint and
 * land nothing. Run by conformance-csv-*.test.ts (onEveryTarget): on hyperd both ways a file reaches
 * it (read by hyperd itself from the claimed path, and streamed as to an endpoint that cannot read
 * the watcher's files), and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openWatcher } from '../../src/api.ts';
import type { WatchOptions } from '../../src/options.ts';
import type { DialectOption } from '../../src/options/table/csv-dialect.ts';
import { gzip } from './compression-suite.ts';
import { once, report } from './csv-dates-suite.ts';
import { rowsOf } from './csv-dialect-suite.ts';
import { waitFor } from './drop.ts';
import { count, type DbFixture, hyperFixture, sqlTypes } from './env.ts';
import { streamedHyperFixture } from './streamed-only.ts';
import { groupLogger, useWatchBench, type WatchBench } from './watch-bench.ts';

/** The dialect settings a user gives for a producer's files. */
export type Dialect = Pick<WatchOptions, DialectOption | 'csvDelimiter' | 'columnTypes' | 'allText'>;

export type Row = readonly (string | null)[];

export interface ProducedCase {
  readonly name: string;
  readonly extension: 'csv' | 'tsv';
  /** The file as the producer wrote it. */
  readonly file: string | Uint8Array;
  /** The producer's own gzip-compressed file, where it writes one; else the file gzipped here. */
  readonly gzipped?: Uint8Array;
  /** The same rows as several small files, as a producer writing one file per batch would. */
  readonly parts?: readonly (string | Uint8Array)[];
  readonly dialect: Dialect;
  /** The columns of an existing table (`id BIGINT, d DATE`); absent, the file makes a new one. */
  readonly existing?: string;
  /** A new table's column types, in order, as describeTable spells them (timestamps Hyper's way). */
  readonly types?: readonly string[];
  /** The select list that spells each column as text, the first column ordering the rows. */
  readonly select: string;
  /** What the producer meant, one row per row of the file, ordered by the first column. */
  readonly rows: readonly Row[];
}

export interface AmbiguousCase {
  readonly name: string;
  readonly extension: 'csv' | 'tsv';
  readonly file: string | Uint8Array;
  readonly dialect: Dialect;
  readonly existing?: string;
  /** The line of the file and the column the `.error` names. */
  readonly line: number;
  readonly column: string;
  /**
   * Into an existing table: a file of the producer whose dates the file decides, and its rows,
   * dropped beside the ambiguous files as small files ready together: it lands, they do not.
   */
  readonly beside?: { readonly file: string | Uint8Array; readonly rows: number };
}

/** `timestamp without time zone` (PostgreSQL's spelling) as `timestamp` (Hyper's). */
const plainTimestamp = (sqlType: string) => sqlType.replace(/ without time zone$/, '');

/** Every row of `rows` `times` times, in the order the suite's query gives them (the first column, then the rest). */
function repeated(rows: readonly Row[], times: number): Row[] {
  return rows.flatMap((row) => Array.from({ length: times }, () => row));
}

export function producedCases(t: WatchBench, cases: readonly ProducedCase[]): void {
  for (const c of cases) {
    const ways = `as written, gzip-compressed${c.parts ? ', and as a group of small files' : ''}`;
    it(`${c.name}: lands as the producer meant, ${ways}`, async () => {
      const { dir, table, opts } = await t.inbox();
      if (c.existing) await t.pool.query(`CREATE TABLE ${table} (${c.existing})`);
      // Named so that the whole file sorts first: it is the one a new table is inferred from.
      const files: [string, string | Uint8Array][] = [
        [`a-whole.${c.extension}`, c.file],
        [`b-gzip.${c.extension}.gz`, c.gzipped ?? (await gzip(c.file))],
        ...(c.parts ?? []).map((part, i): [string, string | Uint8Array] => [`c-part${i}.${c.extension}`, part]),
      ];
      for (const [name, content] of files) await writeFile(join(dir, name), content);
      for (const [name] of files) await writeFile(join(dir, `${name}.ready`), '');
      const logger = groupLogger();
      const handle = await openWatcher(dir, table, { ...opts, ...c.dialect, logger });
      await waitFor(
        () => handle.stats.filesIngested + handle.stats.filesFailed === files.length,
        `${files.length} files of ${c.name} ingested or failed`,
      );
      await handle.stop();
      assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
      assert.equal(handle.stats.rowsRejected, 0);
      if (c.parts)
        assert.ok(
          logger.groups.some((g) => g > 1),
          `files shared a transaction: ${logger.groups.join(', ')}`,
        );
      if (c.types) assert.deepEqual((await sqlTypes(t.pool, table))?.map(plainTimestamp), c.types);
      const order = c.rows[0]!.map((_, i) => String(i + 1)).join(', ');
      const landed = await rowsOf(t, `SELECT ${c.select} FROM ${table} ORDER BY ${order}`);
      const expected = repeated(c.rows, c.parts ? 3 : 2);
      assert.deepEqual(landed, expected);
    });
  }
}

export function ambiguousCases(t: WatchBench, cases: readonly AmbiguousCase[]): void {
  for (const c of cases) {
    const what = 'a day/month date with no order given fails with the --date-style hint, plain and gzip-compressed, and lands nothing';
    it(`${c.name}: ${what}${c.beside ? ' (a decided file beside them lands)' : ''}`, async () => {
      const { dir, table, opts } = await t.inbox();
      if (c.existing) await t.pool.query(`CREATE TABLE ${table} (${c.existing})`);
      const plain = `amb.${c.extension}`;
      const zipped = `amb.${c.extension}.gz`;
      const files: [string, string | Uint8Array][] = [
        [plain, c.file],
        [zipped, await gzip(c.file)],
      ];
      if (c.beside) files.push([`good.${c.extension}`, c.beside.file]);
      for (const [name, content] of files) await writeFile(join(dir, name), content);
      for (const [name] of files) await writeFile(join(dir, `${name}.ready`), '');
      const stats = await once(t, dir, table, { ...opts, ...c.dialect });
      assert.equal(stats.filesIngested, c.beside ? 1 : 0, JSON.stringify(stats.lastError));
      assert.equal(stats.filesFailed, 2);
      for (const name of [plain, zipped]) {
        const error = await report(dir, name);
        assert.equal(error.code, 'DATE_AMBIGUOUS', `${name}: ${error.message}`);
        assert.equal(error.line, c.line, error.message);
        assert.equal(error.column, c.column);
        assert.match(error.hint, /--date-style (DMY|MDY)/);
      }
      if (c.existing) assert.equal(await count(t.pool, table), c.beside?.rows ?? 0, 'only the file beside them landed');
      else assert.equal(await sqlTypes(t.pool, table), undefined, 'no table was made');
    });
  }
}

/**
 * The cases of one producer on every target, one database each for all of them: hyperd reading
 * the files itself, hyperd with the files streamed, and PostgreSQL (`pgFixture`, from
 * postgresForFile). `more` adds a producer's own tests to each.
 */
export function onEveryTarget(
  producer: string,
  tablePrefix: string,
  pgFixture: () => Promise<DbFixture>,
  suite: { readonly cases: readonly ProducedCase[]; readonly ambiguous: readonly AmbiguousCase[]; readonly more?: (t: WatchBench) => void },
): void {
  const targets: [string, () => Promise<DbFixture>, string][] = [
    ['hyperd reading the files itself', () => hyperFixture(), 'h'],
    ['hyperd with the files streamed', streamedHyperFixture, 's'],
    ['PostgreSQL', pgFixture, 'pg'],
  ];
  for (const [target, open, short] of targets) {
    describe(`${producer}, on ${target}`, () => {
      const t = useWatchBench(open, `${tablePrefix}${short}_`);
      producedCases(t, suite.cases);
      ambiguousCases(t, suite.ambiguous);
      suite.more?.(t);
    });
  }
}
