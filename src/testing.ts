/**
 * `hyperwatch/testing`: the contract every ingester plugin must keep, as tests a plugin author
 * runs against a real database with their own sample files; and the contract every database
 * adapter must keep (`testDbAdapter`, see db-contract.ts). Our own plugins and adapters pass them.
 *
 * @example
 * import { testIngester } from 'hyperwatch/testing';
 * import { psvIngester } from './psv.ts';
 *
 * testIngester({
 *   ingester: psvIngester,
 *   good: [{ name: 'a.psv', content: 'id|name\n1|ann\n2|bob\n', rows: 2 }],
 *   bad: [{ name: 'empty.psv', content: '' }],
 * });
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { err, ok, type Result } from 'neverthrow';
import { IngestFailure } from './errors.ts';
import { contractDatabase } from './testing/contract-database.ts';
import { dbAdapterContract, type DbAdapterContractOptions } from './testing/db-contract.ts';
import { claimFile, ensureDir, type OpenedFile } from './protocol/files.ts';
import { silentLogger } from './log.ts';
import { PluginRegistry } from './plugins.ts';
import { dropIfCreatedEmpty } from './columns/schema.ts';
import { qualifiedName } from './columns/sql.ts';
import type { AppendResult, DbAdapter, ErrorKind, IngestContext, IngesterPlugin, IngestError, TableName } from './types.ts';

export interface GoodSample {
  /** File name, with the plugin's extension. */
  readonly name: string;
  readonly content: string | Uint8Array;
  /** Rows the file holds. */
  readonly rows: number;
}

export interface BadSample {
  readonly name: string;
  readonly content: string | Uint8Array;
  /** The error kind the plugin must report (any kind when omitted). */
  readonly kind?: ErrorKind;
}

export interface IngesterContractOptions {
  readonly ingester: IngesterPlugin;
  readonly good: readonly GoodSample[];
  readonly bad?: readonly BadSample[];
  /** The database to test against. Default: an embedded Hyper database in a temp directory. */
  readonly db?: DbAdapter;
}

/** One contract check, runnable under any test runner. */
export interface ContractCase {
  readonly name: string;
  run(): Promise<void>;
}

export interface ContractSuite {
  readonly cases: readonly ContractCase[];
  /** Starts the database (when the suite owns it) and the temp directory. */
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
}

/** The contract as plain cases; `testIngester` registers them with node:test. */
export function ingesterContract(options: IngesterContractOptions): ContractSuite {
  const { ingester } = options;
  const database = contractDatabase(options.db, 1);
  let tables = 0;

  async function claim(sample: { name: string; content: string | Uint8Array }): Promise<OpenedFile> {
    const dir = await mkdtemp(join(database.root(), 'inbox-'));
    await ensureDir(join(dir, 'staging'));
    await writeFile(join(dir, sample.name), sample.content);
    const match = new PluginRegistry([ingester]).match(sample.name);
    assert.ok(match, `${sample.name} does not match the plugin's extensions (${ingester.extensions.join(', ')})`);
    const outcome = claimFile(dir, sample.name, join(dir, 'staging', sample.name), { claimId: 'contract', extension: match.extension });
    assert.equal(outcome.status, 'claimed');
    return (outcome as { file: OpenedFile }).file;
  }

  /** Runs append the way the watcher does: a transaction per attempt, fresh ones on `retry`. */
  async function append(file: OpenedFile, table: TableName): Promise<Result<AppendResult, IngestError>> {
    const fileState = new Map<string, unknown>();
    for (let attempt = 1; ; attempt++) {
      const ctx: IngestContext = {
        capabilities: database.db().capabilities,
        sqlType: (t) => database.db().sqlType(t),
        schema: { createTable: true },
        logger: silentLogger,
        attempt,
        fileState,
      };
      let failure: IngestError | undefined;
      try {
        const value = await database.pool().transaction(async (conn) => {
          const r = await ingester.append(conn, file, table, ctx);
          if (r.isErr()) {
            failure = r.error;
            throw new IngestFailure(r.error);
          }
          return r.value;
        });
        return ok(value);
      } catch (error) {
        if (!failure) throw error;
      }
      await dropIfCreatedEmpty(database.pool(), table);
      if (!failure.retry || attempt >= 8) return err(failure);
    }
  }

  async function rowCount(table: TableName): Promise<number> {
    const exists = await database.pool().transaction((conn) => conn.describeTable(table));
    if (!exists) return 0;
    const rows = await database.pool().query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${qualifiedName(table)}`);
    return Number(rows[0]?.n);
  }

  const nextTable = (): TableName => ({ name: `contract_${ingester.name.replace(/\W/g, '_')}_${++tables}` });
  const digest = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

  const cases: ContractCase[] = [
    {
      name: 'declares lower-case extensions that start with a dot',
      async run() {
        assert.ok(ingester.extensions.length > 0);
        for (const ext of ingester.extensions) assert.match(ext, /^\.[a-z0-9.]+$/, `extension ${ext}`);
      },
    },
    ...options.good.map(
      (sample): ContractCase => ({
        name: `appends ${sample.name} into a new table and reports its ${sample.rows} rows`,
        async run() {
          const table = nextTable();
          const file = await claim(sample);
          try {
            const result = await append(file, table);
            if (result.isErr()) assert.fail(`${result.error.code}: ${result.error.message}`);
            assert.equal(result.value.rows, sample.rows, 'reported row count');
            assert.equal(await rowCount(table), sample.rows, 'rows in the table');
          } finally {
            file.close();
          }
        },
      }),
    ),
    ...options.good.map(
      (sample): ContractCase => ({
        name: `appends ${sample.name} again to the existing table, matching columns by name`,
        async run() {
          const table = nextTable();
          for (let round = 1; round <= 2; round++) {
            const file = await claim(sample);
            try {
              const result = await append(file, table);
              if (result.isErr()) assert.fail(`${result.error.code}: ${result.error.message}`);
            } finally {
              file.close();
            }
          }
          assert.equal(await rowCount(table), sample.rows * 2);
        },
      }),
    ),
    ...options.good.map(
      (sample): ContractCase => ({
        name: `leaves ${sample.name} where it was, unchanged`,
        async run() {
          const file = await claim(sample);
          try {
            const before = digest(await readFile(file.stagedPath));
            await append(file, nextTable());
            assert.equal(digest(await readFile(file.stagedPath)), before);
          } finally {
            file.close();
          }
        },
      }),
    ),
    ...(options.bad ?? []).map(
      (sample): ContractCase => ({
        name: `returns an error value for ${sample.name}, without throwing or appending`,
        async run() {
          const table = nextTable();
          const file = await claim(sample);
          try {
            const result = await append(file, table);
            if (result.isOk()) assert.fail(`${sample.name} was accepted`);
            const { error } = result;
            for (const field of ['code', 'message', 'hint'] as const) assert.equal(typeof error[field], 'string', field);
            assert.ok(error.message.length > 0 && error.hint.length > 0);
            assert.notEqual(error.kind, 'transient', 'bad input is not a transient error');
            if (sample.kind) assert.equal(error.kind, sample.kind);
            assert.equal(await rowCount(table), 0);
          } finally {
            file.close();
          }
        },
      }),
    ),
  ];

  return { cases, setUp: () => database.setUp(), tearDown: () => database.tearDown() };
}

/** Registers the contract as a node:test suite named after the plugin. */
export function testIngester(options: IngesterContractOptions): void {
  register(`ingester contract: ${options.ingester.name}`, ingesterContract(options));
}

export { dbAdapterContract, type DbAdapterContractOptions };

/** Registers the database adapter contract as a node:test suite. */
export function testDbAdapter(options: DbAdapterContractOptions): void {
  register(`database adapter contract: ${options.name}`, dbAdapterContract(options));
}

function register(title: string, suite: ContractSuite): void {
  describe(title, () => {
    before(() => suite.setUp());
    after(() => suite.tearDown());
    for (const c of suite.cases) it(c.name, () => c.run());
  });
}
