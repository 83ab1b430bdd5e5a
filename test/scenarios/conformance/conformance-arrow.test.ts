/**
 * Conformance of the Arrow reader with files other writers make, at test time: Hyper's own
 * `COPY ... TO (FORMAT arrowstream)`, apache-arrow JS, arrow-rs (through parquet-wasm), LZ4 and
 * ZSTD body compression from real compressors, big-endian copies, and damaged files (cases in
 * helpers/conformance-arrow-cases.ts).
 *
 * Each case is loaded into a real hyperd by the Arrow ingester as the watcher runs it, through
 * ARROWSTREAM and through CSV (the path of databases without ARROWSTREAM); then by real watchers
 * on hyperd and on PostgreSQL. A case meant to land must land with the writer's rows and values
 * (the writer's data, read back with apache-arrow, is the judge); a case meant to be refused must
 * be refused with its code, naming the file and the column where it is in one, and land nothing;
 * no case may hold the event loop for `LOOP_BOUND_MS` or grow the process by `MEMORY_BOUND`.
 * One line per case and path is printed as a report.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { makeVector, Table } from 'apache-arrow';
import { createPostgresAdapter } from '../../../adapters/db/postgres/index.ts';
import { arrowIngester } from '../../../plugins/arrow/index.ts';
import { startWatching, stopWatching } from '../../../src/api.ts';
import type { DbPool } from '../../../src/types.ts';
import {
  type Case,
  checkRefusal,
  endsWithMarker,
  hyperWritten,
  LOOP_BOUND_MS,
  MEMORY_BOUND,
  ownReading,
  quiet,
  refusedCases,
  validCases,
} from '../../helpers/conformance-arrow-cases.ts';
import { expectedRows, judge } from '../../helpers/conformance-arrow-judge.ts';
import { drop } from '../../helpers/drop.ts';
import { dbFixture, hyperFixture, tempDir } from '../../helpers/env.ts';
import { type Hold, holdProbe } from '../../helpers/loop-hold.ts';
import { startPostgres } from '../../helpers/postgres.ts';
import { usePluginBench } from '../../helpers/plugin-bench.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

const report: string[] = [];
after(() => console.log(`Arrow conformance report (case [path] | outcome):\n${report.join('\n')}`));

function bounded(label: string, { heldMs, gapMs, growth }: Hold): string {
  assert.ok(heldMs < LOOP_BOUND_MS, `${label}: the event loop was held ${heldMs.toFixed(0)} ms (${gapMs.toFixed(0)} ms of wall clock)`);
  assert.ok(growth < MEMORY_BOUND, `${label}: the process grew by ${(growth / 1048576).toFixed(0)} MiB`);
  return `loop held ${heldMs.toFixed(0)} ms (gap ${gapMs.toFixed(0)} ms), +${(growth / 1048576).toFixed(0)} MiB`;
}

/** Every column as text; `session` settings make PostgreSQL print as Hyper does (UTC, ISO 8601 intervals). */
async function rowsOf(pool: DbPool, table: string, session: readonly string[] = []): Promise<Record<string, string | null>[]> {
  return pool.transaction(async (conn) => {
    const columns = await conn.describeTable({ name: table });
    assert.ok(columns, `table ${table} exists`);
    for (const statement of session) await conn.query(statement);
    const list = columns.map((c) => `"${c.name}"::text AS "${c.name}"`).join(', ');
    return (await conn.query<Record<string, string | null>>(`SELECT ${list} FROM "${table}"`)).map((row) => ({ ...row }));
  });
}

async function rowCount(pool: DbPool, table: string): Promise<number> {
  const columns = await pool.transaction((conn) => conn.describeTable({ name: table }));
  if (!columns) return 0;
  return Number((await pool.query<{ n: string }>(`SELECT COUNT(*)::text AS n FROM "${table}"`))[0]!.n);
}

/**
 * The cases and their bytes, made once for the file: three suites run every case, and making them
 * for each (the writers' tables again, a 1M-row damaged stream among them) cost about 15 CPU-s.
 */
const CASES = [...validCases(), ...refusedCases()];
const bytesMade = new Map<Case, Promise<Uint8Array>>();

function bytesOf(c: Case): Promise<Uint8Array> {
  let bytes = bytesMade.get(c);
  if (!bytes) bytesMade.set(c, (bytes = Promise.resolve(c.bytes())));
  return bytes;
}

const writerRowsMade = new WeakMap<Uint8Array, ReturnType<typeof expectedRows>>();

/**
 * The rows the writer meant for a case's bytes, made once for each case: four paths judge every
 * case, and making them (the writer's data again, each value as the database's text) was a fifth
 * of the file's CPU. Keyed by the bytes themselves: each case's are made once (`bytesOf`), and
 * each belongs to one case.
 */
function writerRows(c: Case, bytes: Uint8Array): ReturnType<typeof expectedRows> {
  let rows = writerRowsMade.get(bytes);
  if (!rows) writerRowsMade.set(bytes, (rows = expectedRows(c.judge!(bytes))));
  return rows;
}

/** The writer's rows against the table's; the report line. */
async function judged(
  label: string,
  c: Case,
  bytes: Uint8Array,
  pool: DbPool,
  table: string,
  rows: number | undefined,
  bounds: string,
  session?: readonly string[],
): Promise<void> {
  const verdict = judge(writerRows(c, bytes), await rowsOf(pool, table, session));
  report.push(`${label} | landed ${rows} rows, ${verdict.ok ? 'values match' : `VALUES DIFFER: ${verdict.detail}`} (${bounds})`);
  assert.ok(verdict.ok, `${label}: ${verdict.detail}`);
}

describe('Arrow conformance: the ingester, on hyperd, through ARROWSTREAM and through CSV', () => {
  const bench = usePluginBench(arrowIngester, { maxAttempts: 3, logger: quiet });
  let serial = 0;

  async function check(c: Case, bytes: Uint8Array): Promise<void> {
    for (const path of ['arrowstream', 'csv'] as const) {
      const table = `conf_${++serial}`;
      const name = `conf-${serial}.arrow`;
      const file = await bench.claim(name, bytes);
      const stop = holdProbe();
      const outcome = await bench.ingest(file, table, { remote: path === 'csv' });
      const hold = stop();
      const label = `${c.name} [ingester, ${path}]`;
      const bounds = bounded(label, hold);
      if (c.judge) {
        assert.equal(outcome.error, undefined, `${label}: refused ${outcome.error?.code}: ${outcome.error?.message}`);
        await judged(label, c, bytes, bench.pool, table, outcome.rows, bounds);
      } else {
        report.push(
          outcome.error
            ? `${label} | refused ${outcome.error.code}: ${outcome.error.message} (${bounds})`
            : `${label} | LANDED ${outcome.rows} rows`,
        );
        assert.ok(outcome.error, `${label}: landed ${outcome.rows} rows of a file that must be refused`);
        checkRefusal(label, c, outcome.error, name);
        assert.equal(await rowCount(bench.pool, table), 0, `${label}: rows landed`);
      }
    }
  }

  it('the judge tells a different value, a missing row and a changed type apart', () => {
    const c = CASES.find((k) => k.name.includes('many types'))!;
    const table = c.judge!(new Uint8Array(0));
    const expected = expectedRows(table);
    const right = expected.rows.map((row) =>
      Object.fromEntries(expected.names.map((n, k) => [n, (JSON.parse(row) as (string | null)[])[k]!])),
    );
    assert.ok(judge(expected, right).ok);
    assert.ok(!judge(expected, right.slice(1)).ok);
    assert.ok(
      !judge(
        expected,
        right.map((r, i) => (i === 0 ? { ...r, i64: '1' } : r)),
      ).ok,
    );
    assert.ok(!judge(expectedRows(new Table({ x: makeVector(Int32Array.of(1)) })), [{ x: '2' }]).ok);
  });

  it("lands Hyper's own Arrow stream (COPY ... TO, no end-of-stream marker) and Arrow file", async () => {
    const bytes = await hyperWritten(bench.pool, bench.inbox, 'hyper-written.arrows', 'arrowstream');
    report.push(`hyper COPY TO arrowstream: ${bytes.length} bytes, ${endsWithMarker(bytes) ? 'with' : 'without'} an end-of-stream marker`);
    assert.equal(endsWithMarker(bytes), false, 'Hyper still writes streams without the end-of-stream marker');
    await check({ name: 'hyper COPY TO arrowstream, 100k rows', bytes: () => bytes, judge: ownReading }, bytes);
    const file = await hyperWritten(bench.pool, bench.inbox, 'hyper-written.arrow', 'arrowfile');
    await check({ name: 'hyper COPY TO arrowfile, 100k rows', bytes: () => file, judge: ownReading }, file);
  });

  for (const c of CASES) {
    it(`${c.judge ? 'lands' : 'refuses'}: ${c.name}`, async () => {
      await check(c, await bytesOf(c));
    });
  }
});

/** Every case through a real watcher: its own inbox and table, the outcome in stats, the table and `failed/`. */
function watcherSuite(label: string, open: () => Promise<import('../../helpers/env.ts').DbFixture>, session: readonly string[]): void {
  describe(`Arrow conformance: a watcher on ${label}`, () => {
    const bench = useWatchBench(open, 'wconf_');
    let hyperStream: Uint8Array | undefined;

    async function check(c: Case, bytes: Uint8Array, name = 'case.arrow'): Promise<void> {
      const { dir, table, opts } = await bench.inbox();
      await drop(dir, name, bytes);
      const stop = holdProbe();
      const stats = await startWatching(dir, table, opts);
      const hold = stop();
      await stopWatching(dir, { registry: opts.registry! });
      const caseLabel = `${c.name} [watcher, ${label}]`;
      const bounds = bounded(caseLabel, hold);
      if (c.judge) {
        assert.equal(stats.filesFailed, 0, `${caseLabel}: ${JSON.stringify(stats.lastError)}`);
        assert.equal(stats.filesIngested, 1);
        await judged(caseLabel, c, bytes, bench.pool, table, stats.rowsIngested, bounds, session);
      } else {
        assert.equal(stats.filesIngested, 0, `${caseLabel}: landed`);
        assert.equal(stats.filesFailed, 1);
        const error = JSON.parse(await readFile(join(dir, 'failed', `${name}.error`), 'utf8'));
        report.push(`${caseLabel} | refused ${error.code}: ${error.message} (${bounds})`);
        checkRefusal(caseLabel, c, error, name);
        assert.equal(await rowCount(bench.pool, table), 0, `${caseLabel}: rows landed`);
      }
    }

    it("lands Hyper's own Arrow stream (COPY ... TO, no end-of-stream marker)", async () => {
      const writer = await hyperFixture();
      try {
        hyperStream = await hyperWritten(writer.pool, writer.root, 'hyper-written.arrows', 'arrowstream');
      } finally {
        await writer.close();
      }
      // Under the stream format's own extension, as Hyper's users name such files.
      await check(
        { name: 'hyper COPY TO arrowstream, 100k rows, as .arrows', bytes: () => hyperStream!, judge: ownReading },
        hyperStream,
        'hyper.arrows',
      );
    });

    for (const c of CASES) {
      it(`${c.judge ? 'lands' : 'refuses'}: ${c.name}`, async () => {
        await check(c, await bytesOf(c));
      });
    }
  });
}

watcherSuite('hyperd', () => hyperFixture(), []);

const postgres = { server: undefined as Awaited<ReturnType<typeof startPostgres>> | undefined };
after(async () => {
  await postgres.server?.stop();
});
watcherSuite('PostgreSQL', async () => {
  postgres.server ??= await startPostgres();
  return dbFixture(await tempDir('hyperwatch-arrow-pg-'), createPostgresAdapter({ url: postgres.server.url }), { ownsDb: true });
}, ["SET LOCAL timezone = 'UTC'", "SET LOCAL intervalstyle = 'iso_8601'"]);
