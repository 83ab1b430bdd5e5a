/**
 * The contract every database adapter must keep, as cases run against a real server: what the
 * core relies on for exactly-once (transactions that commit or leave nothing, the ledger row sent
 * with the COMMIT, COPY that reports its rows or fails whole), for matching columns (describing a
 * table) and for naming any table. `testDbAdapter` (in `hyperwatch/testing`) registers them. The
 * cases on one subject each are in db-contract-*.ts; this file keeps those on transactions and
 * durability, and assembles the suite in its order.
 */
import assert from 'node:assert/strict';
import { contractDatabase } from './contract-database.ts';
import { copyCases } from './db-contract-copy.ts';
import { ledgerCase } from './db-contract-ledger.ts';
import { everyTypeCase, tableNameCases } from './db-contract-tables.ts';
import { transactionEndCases } from './db-contract-transactions.ts';
import type { ContractCase, ContractSuite } from '../testing.ts';
import type { DbAdapter } from '../types.ts';

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
    everyTypeCase(p, db, nextTable),
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
    ...tableNameCases(p, nextTable, count),
    ledgerCase(p, db, nextTable),
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
