/**
 * `onBadRows: 'skip'` on each database: the bad-rows test files register their cases once, and
 * they run on a real embedded hyperd and on a real PostgreSQL (a throwaway cluster), each with a
 * fresh database, a watcher per inbox, and the ledger row of a file to check.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe } from 'node:test';
import { createPostgresAdapter } from '../../adapters/db/postgres/index.ts';
import { openWatcher } from '../../src/api.ts';
import { LEDGER_TABLE } from '../../src/constants.ts';
import { qualifiedName } from '../../src/columns/sql.ts';
import { WatcherRegistry } from '../../src/registry.ts';
import type { DbAdapter, DbPool } from '../../src/types.ts';
import type { WatcherHandle } from '../../src/watcher/handle.ts';
import { type DbFixture, dbFixture, hyperFixture, LiveFixture, tempDir } from './env.ts';
import { startPostgres } from './postgres.ts';

/** A file with good rows and one of each kind of bad row, and what must come of it. */
export const MIXED = [
  'id,name,day',
  '1,alpha,2024-01-01',
  'x2,beta,2024-01-02', // 3: not a bigint
  '3,"multi',
  'line",2024-01-03', // 4-5: a good row over two lines
  '4,delta', // 6: too few fields
  '', // 7: blank line
  '5,echo,2024-13-45', // 8: not a date
  '6,"fox, trot",2024-01-06',
  '1e3,golf,2024-01-07', // 10: let through here, refused by both databases
  '8,hotel,2024-01-08',
].join('\n');
export const MIXED_GOOD = 4;
export const MIXED_BAD_LINES = [3, 6, 7, 8, 10];

export interface BadRowsBench {
  /** The suite's database: root, adapter, pool for checks. */
  readonly fx: LiveFixture;
  /** Settles once the database is open (it opens as the suite is registered). */
  readonly fixture: Promise<DbFixture>;
  /** A new inbox with a watcher (one file a batch) into `table`, created first unless `create` is false. */
  inbox(table: string, options: Record<string, unknown>, create?: boolean): Promise<{ dir: string; handle: WatcherHandle }>;
  /** The ledger's [row_count, rows_rejected] of `file` in `table`. */
  ledgerRow(table: string, file: string): Promise<(number | null)[][]>;
}

const DATABASES: readonly [string, () => Promise<DbFixture>][] = [
  ['Hyper', () => hyperFixture()],
  [
    'PostgreSQL',
    async () => {
      const pg = await startPostgres();
      const db: DbAdapter = createPostgresAdapter({ url: pg.url });
      const fx = await dbFixture(await tempDir('hyperwatch-pgtest-'), db, { ownsDb: true });
      return { ...fx, close: async () => (await fx.close(), await pg.stop()) } satisfies DbFixture & { pool: DbPool };
    },
  ],
];

/** Registers `cases` in a `describe` of its own on each database. */
export function badRowCases(cases: (bench: BadRowsBench) => void): void {
  for (const [name, open] of DATABASES) {
    describe(`bad rows skipped on ${name}`, () => {
      let current: DbFixture | undefined;
      let n = 0;
      const fixture = open().then((f) => (current = f));
      after(async () => (await fixture).close());
      const fx = new LiveFixture(() => {
        if (!current) throw new Error('the database is not open yet: await fixture first');
        return current;
      });

      async function inbox(table: string, options: Record<string, unknown>, create = true) {
        await fixture;
        const dir = join(fx.root, `inbox-${++n}`);
        await mkdir(dir);
        if (create) await fx.pool.query(`CREATE TABLE ${table} (id BIGINT, name TEXT, day DATE)`);
        const handle = await openWatcher(dir, table, { db: fx.db, registry: new WatcherRegistry(), batchFiles: 1, ...options });
        return { dir, handle };
      }

      async function ledgerRow(table: string, file: string) {
        const rows = await fx.pool.query<{ row_count: string; rows_rejected: string | null }>(
          `SELECT row_count, rows_rejected FROM ${qualifiedName(LEDGER_TABLE)} WHERE target_table = '${table}' AND file_name = '${file}'`,
        );
        return rows.map((r) => [Number(r.row_count), r.rows_rejected === null ? null : Number(r.rows_rejected)]);
      }

      cases({ fx, fixture, inbox, ledgerRow });
    });
  }
}
