/**
 * Leases: each watcher process has an identity (its owner id) and a lease row in the target
 * database, renewed by heartbeats. The database is the only coordinator: a process whose lease
 * expired is taken over by another, which bumps its token; every file transaction proves, by
 * updating one of its own fence rows with its token, that it was not taken over meanwhile.
 *
 * Why an UPDATE and not a read: Hyper runs transactions under snapshot isolation with
 * first-updater-wins and no read validation (checked: a transaction that read its lease row,
 * then saw another transaction change it and commit, still committed). Two transactions that
 * update the same row do conflict there (the second fails at once with 40001), and on
 * PostgreSQL the second waits for the first and then re-reads the row. Each transaction of one
 * process updates a fence row of its own slot, so a process's own transactions never conflict.
 */
import { FENCE_TABLE, LEASE_TABLE } from '../constants.ts';
import { deniedAs, ensureOwnSchema, ensureOwnTable } from './own-tables.ts';
import { qualifiedName, quoteLiteral, tableLabel } from '../columns/sql.ts';
import type { DbAdapter, DbConnection, DbPool } from '../types.ts';

const LEASES = qualifiedName(LEASE_TABLE);
const FENCES = qualifiedName(FENCE_TABLE);

/** Who a process is, as its lease row says. */
export interface Identity {
  /** `<host>-<pid>-<random>`: new at every start, never reused. */
  readonly owner: string;
  readonly host: string;
  readonly pid: number;
  readonly directory: string;
  readonly target: string;
}

/** A lease row as `status` and takeover read it. */
export interface LeaseRow {
  readonly owner: string;
  readonly host: string;
  readonly pid: number;
  readonly directory: string;
  readonly target: string;
  readonly token: number;
  readonly startedAt: string;
  readonly renewedAt: string;
  readonly expiresAt: string;
  readonly takenBy: string | null;
  readonly holding: number;
  /** Past its expiry by the database's clock. */
  readonly expired: boolean;
}

/** Creates the lease and fence tables (and their schema) when missing. */
export async function ensureLeaseTables(pool: DbPool): Promise<void> {
  await ensureOwnSchema(pool);
  await ensureOwnTable(
    pool,
    LEASE_TABLE,
    `owner TEXT NOT NULL,
     host TEXT NOT NULL,
     pid BIGINT NOT NULL,
     directory TEXT NOT NULL,
     target_table TEXT NOT NULL,
     token BIGINT NOT NULL,
     started_at TIMESTAMPTZ NOT NULL,
     renewed_at TIMESTAMPTZ NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL,
     taken_by TEXT,
     holding BIGINT NOT NULL`,
  );
  await ensureOwnTable(pool, FENCE_TABLE, 'owner TEXT NOT NULL, slot BIGINT NOT NULL, token BIGINT NOT NULL, uses BIGINT NOT NULL');
}

/** `CURRENT_TIMESTAMP + ms`, in the database's clock (hosts' clocks may disagree). */
function inMs(ms: number): string {
  return `CURRENT_TIMESTAMP + INTERVAL '${Math.max(0, Math.trunc(ms))} milliseconds'`;
}

/** The first token of every lease; a takeover adds one. */
export const FIRST_TOKEN = 1;

/** Inserts this process's lease and its `slots` fence rows, in one transaction. */
export async function registerLease(pool: DbPool, me: Identity, leaseMs: number, slots: number): Promise<void> {
  const o = quoteLiteral(me.owner);
  try {
    await pool.transaction(async (conn) => {
      await conn.execute(
        `INSERT INTO ${LEASES} (owner, host, pid, directory, target_table, token, started_at, renewed_at, expires_at, taken_by, holding)
         VALUES ` +
          `(${o}, ${quoteLiteral(me.host)}, ${Math.trunc(me.pid)}, ${quoteLiteral(me.directory)}, ${quoteLiteral(me.target)}, ` +
          `${FIRST_TOKEN}, ` +
          `CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, ${inMs(leaseMs)}, NULL, 0)`,
      );
      const rows = Array.from({ length: slots }, (_, slot) => `(${o}, ${slot}, ${FIRST_TOKEN}, 0)`);
      await conn.execute(`INSERT INTO ${FENCES} (owner, slot, token, uses) VALUES ${rows.join(', ')}`);
    });
  } catch (error) {
    // The first write of a start: a role that may not write them learns here what to grant.
    throw deniedAs(`write hyperwatch's tables ${tableLabel(LEASE_TABLE)} and ${tableLabel(FENCE_TABLE)}`, error);
  }
}

/** Renews the lease; false when it is no longer ours (taken over, or removed). */
export async function renewLease(pool: DbPool, owner: string, leaseMs: number, holding: number): Promise<boolean> {
  const n = await pool.transaction((conn) =>
    conn.execute(
      `UPDATE ${LEASES} SET renewed_at = CURRENT_TIMESTAMP, expires_at = ${inMs(leaseMs)}, holding = ${Math.trunc(holding)}
        WHERE owner = ${quoteLiteral(owner)} AND token = ${FIRST_TOKEN} AND taken_by IS NULL`,
    ),
  );
  return n === 1;
}

/** On a clean stop: nothing of ours is left to take over. */
export async function releaseLease(pool: DbPool, owner: string): Promise<void> {
  await dropLease(pool, owner);
}

/**
 * The fence of one file transaction: proves, in the transaction, that `owner` was not taken
 * over. Updating the row (rather than reading it) is what makes a concurrent takeover conflict.
 */
export async function checkFence(conn: DbConnection, owner: string, slot: number): Promise<boolean> {
  const n = await conn.execute(
    `UPDATE ${FENCES} SET uses = uses + 1 WHERE owner = ${quoteLiteral(owner)} AND slot = ${Math.trunc(slot)} AND token = ${FIRST_TOKEN}`,
  );
  return n === 1;
}

/** Every lease row of `directory` (all directories when undefined), by the database's clock. */
export async function readLeases(pool: DbPool, directory?: string): Promise<LeaseRow[]> {
  const where = directory === undefined ? 'TRUE' : `directory = ${quoteLiteral(directory)}`;
  const rows = await pool.query<Record<string, unknown>>(
    `SELECT owner, host, pid, directory, target_table, token, started_at, renewed_at, expires_at, taken_by, holding,
            expires_at < CURRENT_TIMESTAMP AS expired
       FROM ${LEASES} WHERE ${where} ORDER BY started_at, owner`,
  );
  return rows.map((r) => ({
    owner: String(r.owner),
    host: String(r.host),
    pid: Number(r.pid),
    directory: String(r.directory),
    target: String(r.target_table),
    token: Number(r.token),
    startedAt: iso(r.started_at),
    renewedAt: iso(r.renewed_at),
    expiresAt: iso(r.expires_at),
    takenBy: r.taken_by === null || r.taken_by === undefined ? null : String(r.taken_by),
    holding: Number(r.holding),
    expired: r.expired === true || r.expired === 't',
  }));
}

function iso(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  const ms = Date.parse(String(value));
  return Number.isNaN(ms) ? String(value) : new Date(ms).toISOString();
}

/**
 * Takes `dead`'s lease over for `taker`: only while it is still expired (or its process is
 * provably gone: `force`) and not renewed or taken meanwhile. Bumps the token of its lease and
 * of all its fence rows in the same transaction, so that none of its transactions commits
 * afterwards. `taken` when this call took it; else why not (for the debug log).
 */
export async function takeLease(
  pool: DbPool,
  db: Pick<DbAdapter, 'limitLockWait'>,
  dead: string,
  taker: string,
  force: boolean,
): Promise<TakeResult> {
  const d = quoteLiteral(dead);
  try {
    return await pool.transaction(async (conn): Promise<TakeResult> => {
      // Where an update waits for a row lock (PostgreSQL), a process frozen between its fence and
      // its COMMIT would hold this takeover (and the task running it) for as long as it stays frozen.
      await db.limitLockWait?.(conn, 1000);
      const n = await conn.execute(
        `UPDATE ${LEASES} SET token = token + 1, taken_by = ${quoteLiteral(taker)}
          WHERE owner = ${d} AND token = ${FIRST_TOKEN} AND taken_by IS NULL${force ? '' : ' AND expires_at < CURRENT_TIMESTAMP'}`,
      );
      if (n !== 1) return { taken: false, why: 'renewed, or taken by another process' };
      await conn.execute(`UPDATE ${FENCES} SET token = token + 1 WHERE owner = ${d}`);
      return { taken: true };
    });
  } catch (error) {
    // A conflict with the owner's own transaction (it is alive after all, or mid-commit): the
    // next round looks again.
    const code = (error as { code?: unknown }).code;
    if (code === '40001' || code === '40P01' || code === '55P03')
      return { taken: false, why: `conflict (${String(code)}): ${String((error as Error).message)}` };
    throw error;
  }
}

/** Whether `takeLease` took the lease, and why not. */
export interface TakeResult {
  readonly taken: boolean;
  readonly why?: string;
}

/**
 * Ends the sessions of `dead` (its lease expired) that hold a lock on its lease row or one of its
 * fence rows: a transaction frozen between its renewal or its fence and its COMMIT (the process
 * stopped, SIGSTOP or a paused VM, between two round trips), which would otherwise hold the
 * takeover for as long as the process stays frozen, where the database lets such a lock make
 * others wait (see `DbAdapter.endRowLockHolders`). Returns how many it ended.
 */
export async function endFrozenSessions(pool: DbPool, db: Pick<DbAdapter, 'endRowLockHolders'>, dead: string): Promise<number> {
  if (!db.endRowLockHolders) return 0;
  let ended = 0;
  for (const table of [LEASES, FENCES]) ended += await db.endRowLockHolders(pool, { table, column: 'owner', value: dead });
  return ended;
}

/** Removes a lease and its fences once nothing of it is left in staging. */
export async function dropLease(pool: DbPool, owner: string): Promise<void> {
  const o = quoteLiteral(owner);
  await pool.transaction(async (conn) => {
    await conn.execute(`DELETE FROM ${FENCES} WHERE owner = ${o}`);
    await conn.execute(`DELETE FROM ${LEASES} WHERE owner = ${o}`);
  });
}
