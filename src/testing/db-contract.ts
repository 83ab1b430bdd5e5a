/**
 * The contract every database adapter must keep, as cases run against a real server: what the
 * core relies on for exactly-once (transactions that commit or leave nothing, the ledger row sent
 * with the COMMIT, COPY that reports its rows or fails whole), for matching columns (describing a
 * table) and for naming any table. `testDbAdapter` (in `hyperwatch/testing`) registers them.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDbAdapter } from '../compose.ts';
import { fromDbError } from '../errors.ts';
import { transactionEndCases } from './db-contract-transactions.ts';
import {
  committedChecksums,
  committedClaims,
  ensureLedger,
  type LedgerEntry,
  ledgerInsert,
  ledgerScratchPath,
  recordAllInLedger,
} from '../store/ledger.ts';
import { newClaimId } from '../protocol/names.ts';
import { qualifiedName, quoteIdent } from '../columns/sql.ts';
import type { ContractCase, ContractSuite } from '../testing.ts';
import type { DbAdapter, DbPool, LogicalType, TableName } from '../types.ts';

export interface DbAdapterContractOptions {
  /** Names the suite. */
  readonly name: string;
  /** The adapter under test; the caller closes it. Default: an embedded Hyper database in a temp directory. */
  readonly db?: DbAdapter;
}

/** A case, and whether it applies to an adapter (an optional feature it may not have). */
interface AdapterCase extends ContractCase {
  readonly applies?: (db: DbAdapter) => boolean;
}

const EVERY_TYPE: readonly LogicalType[] = [
  { kind: 'boolean' },
  { kind: 'smallint' },
  { kind: 'integer' },
  { kind: 'bigint' },
  { kind: 'real' },
  { kind: 'double' },
  { kind: 'decimal', precision: 18, scale: 3 },
  { kind: 'text' },
  { kind: 'json' },
  { kind: 'bytes' },
  { kind: 'date' },
  { kind: 'time' },
  { kind: 'timestamp' },
  { kind: 'timestamptz' },
];

async function* chunks(...parts: string[]): AsyncIterable<string> {
  yield* parts;
}

/**
 * The database a contract suite runs on: the caller's adapter (the caller closes it), or an
 * embedded Hyper database in a temp directory, both opened by `setUp` and closed by `tearDown`.
 */
export function contractDatabase(given: DbAdapter | undefined, maxConnections: number) {
  let root: string | undefined;
  let db: DbAdapter | undefined;
  let pool: DbPool | undefined;
  const notSetUp = () => assert.fail('the contract suite is not set up');
  return {
    root: (): string => root ?? notSetUp(),
    db: (): DbAdapter => db ?? notSetUp(),
    pool: (): DbPool => pool ?? notSetUp(),
    async setUp(): Promise<void> {
      root = await mkdtemp(join(tmpdir(), 'hyperwatch-contract-'));
      db = given ?? createDbAdapter({ adapter: 'hyper', database: join(root, 'contract.hyper') });
      pool = await db.openPool({ maxConnections });
    },
    async tearDown(): Promise<void> {
      await pool?.close();
      if (!given) await db?.close();
      if (root) await rm(root, { recursive: true, force: true });
    },
  };
}

export function dbAdapterContract(options: DbAdapterContractOptions): ContractSuite {
  const database = contractDatabase(options.db, 2);
  let tables = 0;
  const p = database.pool;
  const db = database.db;
  const nextTable = (label: string): string => `dbcontract_${label}_${++tables}`;
  const count = async (table: string): Promise<number> =>
    Number((await p().query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${table}`))[0]?.n);

  const cases: AdapterCase[] = [
    {
      name: 'declares its capabilities and describes itself',
      async run() {
        for (const flag of ['readsLocalFiles', 'arrowStream', 'parquet', 'durableCommit'] as const)
          assert.equal(typeof db().capabilities[flag], 'boolean', flag);
        assert.ok(db().describe().length > 0);
        if (!db().capabilities.durableCommit) assert.ok(db().checkpoint, 'commits that are not durable need a checkpoint');
      },
    },
    {
      name: 'spells every logical type as a column type the database takes, and describes it back',
      async run() {
        const table = nextTable('types');
        await p().query(`CREATE TABLE ${table} (${EVERY_TYPE.map((t, i) => `c${i} ${db().sqlType(t)}`).join(', ')})`);
        const columns = await p().transaction((conn) => conn.describeTable({ name: table }));
        assert.deepEqual(
          columns?.map((c) => c.name),
          EVERY_TYPE.map((_, i) => `c${i}`),
        );
        assert.ok(columns!.every((c) => c.nullable && c.sqlType.length > 0));
      },
    },
    {
      name: 'commits a transaction: its rows are there for every connection',
      async run() {
        const table = nextTable('commit');
        await p().query(`CREATE TABLE ${table} (id BIGINT NOT NULL)`);
        assert.equal(await p().transaction((conn) => conn.execute(`INSERT INTO ${table} VALUES (1), (2)`)), 2);
        assert.equal(await count(table), 2);
      },
    },
    {
      name: 'rolls back a transaction whose work throws: nothing of it is kept, the connection is usable again',
      async run() {
        const table = nextTable('rollback');
        await p().query(`CREATE TABLE ${table} (id BIGINT NOT NULL)`);
        const failing = p().transaction(async (conn) => {
          await conn.execute(`INSERT INTO ${table} VALUES (1)`);
          throw new Error('the work failed');
        });
        await assert.rejects(failing, /the work failed/);
        assert.equal(await count(table), 0);
        await p().transaction((conn) => conn.execute(`INSERT INTO ${table} VALUES (2)`));
        assert.equal(await count(table), 1);
      },
    },
    {
      name: "sends a transaction's last statement with its COMMIT; when it fails, nothing of the transaction is kept",
      async run() {
        const table = nextTable('last');
        await p().query(`CREATE TABLE ${table} (id BIGINT NOT NULL, what TEXT)`);
        // A failing last statement: the rows inserted by fn are rolled back, the statement's error surfaces.
        const failing = p().transaction(
          async (conn) => {
            await conn.execute(`INSERT INTO ${table} VALUES (1, 'data'), (2, 'data')`);
            return 2;
          },
          { last: () => ({ text: `INSERT INTO ${table} VALUES (NULL, 'ledger')` }) },
        );
        await assert.rejects(failing, (error: { message?: string }) => /null/i.test(error.message ?? ''));
        assert.equal(await count(table), 0, 'nothing of the failed transaction was kept');
        // A good one: both commit, and the last statement is made from fn's result (with parameters too).
        const result = await p().transaction(
          async (conn) => {
            await conn.execute(`INSERT INTO ${table} VALUES (3, 'data')`);
            return 3;
          },
          { last: (n) => ({ text: `INSERT INTO ${table} VALUES ($1, $2)`, params: [n * 10, 'ledger \\ with a backslash'] }) },
        );
        assert.equal(result, 3);
        const rows = await p().query<{ id: string; what: string }>(`SELECT id, what FROM ${table} ORDER BY id`);
        assert.deepEqual(
          rows.map((r) => [Number(r.id), r.what]),
          [
            [3, 'data'],
            [30, 'ledger \\ with a backslash'],
          ],
        );
        // The connections are fine afterwards: every one of them runs a transaction again.
        await Promise.all(
          [1, 2, 3, 4].map((k) => p().transaction((conn) => conn.execute(`INSERT INTO ${table} VALUES (${100 + k}, 'after')`))),
        );
        assert.equal(await count(table), 6);
      },
    },
    ...copyCases(p, nextTable, count),
    {
      name: 'describes a table by its exact (case-sensitive) name (and which columns the database fills), or null when it is missing',
      async run() {
        const name = nextTable('MiXed');
        await p().query(`CREATE TABLE ${quoteIdent(name)} ("Id" BIGINT NOT NULL, note TEXT, n INTEGER NOT NULL DEFAULT 7)`);
        const cols = await p().transaction((conn) => conn.describeTable({ name }));
        assert.deepEqual(
          cols?.map(({ name, sqlType, nullable }) => ({ name, sqlType, nullable })),
          [
            { name: 'Id', sqlType: 'bigint', nullable: false },
            { name: 'note', sqlType: 'text', nullable: true },
            { name: 'n', sqlType: 'integer', nullable: false },
          ],
        );
        // Optional, but when said it must be right: a column with a DEFAULT is filled by the database.
        assert.deepEqual(
          cols?.map((c) => c.filledByDatabase ?? 'unsaid'),
          cols?.[0]?.filledByDatabase === undefined ? ['unsaid', 'unsaid', 'unsaid'] : [false, false, true],
        );
        assert.deepEqual(await p().transaction((conn) => conn.describeTable({ schema: 'public', name })), cols);
        assert.equal(await p().transaction((conn) => conn.describeTable({ name: name.toLowerCase() })), null);
      },
    },
    {
      name: 'takes any table and column name, quoted: spaces, quotes, capitals, non-ASCII',
      async run() {
        const table: TableName = { name: `${nextTable('odd')} "quoted" Ünï` };
        await p().query(`CREATE TABLE ${qualifiedName(table)} (${quoteIdent('a "b"')} BIGINT, ${quoteIdent('Ça va')} TEXT)`);
        const loaded = await p().transaction((conn) =>
          conn.copyFrom(`COPY ${qualifiedName(table)} FROM STDIN WITH (FORMAT csv)`, chunks('1,x\n2,"y, z"\n')),
        );
        assert.equal(loaded, 2);
        assert.deepEqual(
          (await p().transaction((conn) => conn.describeTable(table)))?.map((c) => c.name),
          ['a "b"', 'Ça va'],
        );
        assert.equal(await count(qualifiedName(table)), 2);
      },
    },
    {
      name: 'keeps the ledger: rows by INSERT (with the COMMIT) and by COPY, found again by claim id and checksum',
      async run() {
        await ensureLedger(p());
        await ensureLedger(p()); // idempotent: every watcher start runs it
        const target = nextTable('ledger');
        const entry = (i: number): LedgerEntry => ({
          claimId: newClaimId(),
          fileName: `f${i} "quoted" \\ back.csv`,
          fileSize: 10 + i,
          rows: i,
          targetTable: target,
          directory: '/in',
          checksum: `${i}`.repeat(64).slice(0, 64),
        });
        const few = [entry(1), entry(2)];
        const many = [3, 4, 5, 6, 7].map(entry);
        await p().transaction(async (conn) => recordAllInLedger(conn, many));
        await p().transaction(async () => few.length, { last: () => ledgerInsert(few) });
        // A database that reads files itself reads the rows from a file written for it, removed after.
        const read = [8, 9, 10, 12].map(entry);
        if (db().capabilities.readsLocalFiles) {
          const folder = await mkdtemp(join(tmpdir(), 'hyperwatch-ledger-'));
          try {
            const path = ledgerScratchPath(folder, 'contract');
            await p().transaction(async (conn) => recordAllInLedger(conn, read, path));
            assert.deepEqual(await readdir(folder), [], 'the file for the server is removed');
          } finally {
            await rm(folder, { recursive: true, force: true });
          }
        } else {
          await p().transaction(async (conn) => recordAllInLedger(conn, read));
        }
        const all = [...few, ...many, ...read];
        assert.deepEqual(
          [
            ...(await committedClaims(
              p(),
              all.map((e) => e.claimId),
            )),
          ].sort(),
          all.map((e) => e.claimId).sort(),
        );
        assert.equal((await committedClaims(p(), [newClaimId()])).size, 0);
        const sums = await committedChecksums(
          p(),
          target,
          all.map((e) => e.checksum!),
        );
        assert.deepEqual([...sums.values()].sort(), all.map((e) => e.fileName).sort());
      },
    },
    ...transactionEndCases(p, nextTable, count),
    {
      name: "keeps a rolled-back transaction's CREATE TABLE exactly when it declares ddlSurvivesRollback",
      async run() {
        const table = nextTable('ddl');
        const rolledBack = p().transaction(async (conn) => {
          await conn.execute(`CREATE TABLE ${table} (a INTEGER)`);
          throw new Error('roll it back');
        });
        await assert.rejects(rolledBack, /roll it back/);
        const kept = (await p().transaction((conn) => conn.describeTable({ name: table }))) !== null;
        assert.equal(kept, db().capabilities.ddlSurvivesRollback === true);
      },
    },
    {
      name: 'when its commits are not durable at once: a checkpoint keeps every committed row, within one server epoch',
      applies: (adapter) => adapter.checkpoint !== undefined,
      async run() {
        const adapter = db();
        assert.ok(adapter.checkpoint, 'commits that are not durable need a checkpoint');
        const table = nextTable('checkpoint');
        await p().query(`CREATE TABLE ${table} (id BIGINT)`);
        await p().transaction((conn) => conn.execute(`INSERT INTO ${table} VALUES (1)`));
        const epoch = adapter.epoch?.();
        await adapter.checkpoint();
        assert.equal(adapter.epoch?.(), epoch);
        assert.equal(await count(table), 1);
      },
    },
  ];

  // Cases for an optional feature run where the adapter has it (the default, Hyper, has them all).
  const known = options.db;
  return {
    cases: known ? cases.filter((c) => c.applies?.(known) ?? true) : cases,
    setUp: () => database.setUp(),
    tearDown: () => database.tearDown(),
  };
}

function copyCases(p: () => DbPool, nextTable: (label: string) => string, count: (table: string) => Promise<number>): ContractCase[] {
  return [
    {
      name: 'copyFrom streams CSV into a table and reports the row count',
      async run() {
        const table = nextTable('copy');
        await p().query(`CREATE TABLE ${table} (a BIGINT, b TEXT)`);
        const n = await p().transaction((conn) =>
          conn.copyFrom(`COPY ${table} FROM STDIN WITH (FORMAT csv, HEADER true)`, chunks('a,b\n', '1,x\n2,y\n3,z\n')),
        );
        assert.equal(n, 3);
        assert.equal(await count(table), 3);
      },
    },
    {
      name: 'copyFrom rejects (and rolls back) when the last chunk holds a bad row, naming its line, instead of hanging',
      async run() {
        const table = nextTable('copybad');
        await p().query(`CREATE TABLE ${table} (a BIGINT, b TEXT)`);
        const failing = p().transaction(async (conn) => {
          await conn.query(`INSERT INTO ${table} VALUES (100, 'before')`);
          return conn.copyFrom(`COPY ${table} FROM STDIN WITH (FORMAT csv, HEADER true)`, chunks('a,b\n1,x\n', 'oops,y\n'));
        });
        await assert.rejects(failing, (error: unknown) => {
          const failure = fromDbError(error);
          return failure.sqlState === '22P02' && failure.kind === 'data' && failure.line === 3;
        });
        assert.equal(await count(table), 0);
      },
    },
    {
      name: 'copyFrom rejects with the source error when reading the input fails',
      async run() {
        const table = nextTable('copysource');
        await p().query(`CREATE TABLE ${table} (a BIGINT)`);
        async function* broken(): AsyncIterable<string> {
          yield 'a\n1\n';
          throw Object.assign(new Error('disk on fire'), { code: 'EIO' });
        }
        await assert.rejects(
          p().transaction((conn) => conn.copyFrom(`COPY ${table} FROM STDIN WITH (FORMAT csv, HEADER true)`, broken())),
          /disk on fire/,
        );
        assert.equal(await count(table), 0);
      },
    },
  ];
}
