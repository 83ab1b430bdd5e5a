/**
 * The database a contract suite runs on, for both contracts (`testIngester` in src/testing.ts,
 * `testDbAdapter` in db-contract.ts): the caller's adapter, or an embedded Hyper database in a
 * temp directory, opened by `setUp` and closed by `tearDown`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDbAdapter } from '../compose.ts';
import type { DbAdapter, DbPool } from '../types.ts';

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
