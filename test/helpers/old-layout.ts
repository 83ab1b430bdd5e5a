/**
 * A database as the versions before the schema of its own left it: hyperwatch's tables in
 * `public`, made with the DDL of those versions (src/store/ledger.ts, src/store/lease.ts and src/store/own-tables.ts
 * at 041d1fe: `CREATE TABLE IF NOT EXISTS "hyperwatch_ingest_log" (...)`, unqualified), and rows
 * as they wrote them. `ledgerColumns: 'first'` makes the ledger of the first versions (before
 * `rows_rejected` and `owner`).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DbPool } from '../../src/types.ts';

const OLD_LEDGER_DDL = `CREATE TABLE IF NOT EXISTS "hyperwatch_ingest_log" (claim_id TEXT NOT NULL,
     file_name TEXT NOT NULL,
     file_size BIGINT NOT NULL,
     row_count BIGINT NOT NULL,
     target_table TEXT NOT NULL,
     directory TEXT NOT NULL,
     committed_at TIMESTAMPTZ NOT NULL,
     checksum TEXT,
     rows_rejected BIGINT,
     owner TEXT)`;

const FIRST_LEDGER_DDL = `CREATE TABLE IF NOT EXISTS "hyperwatch_ingest_log" (claim_id TEXT NOT NULL,
     file_name TEXT NOT NULL,
     file_size BIGINT NOT NULL,
     row_count BIGINT NOT NULL,
     target_table TEXT NOT NULL,
     directory TEXT NOT NULL,
     committed_at TIMESTAMPTZ NOT NULL,
     checksum TEXT)`;

const OLD_LEASES_DDL = `CREATE TABLE IF NOT EXISTS "hyperwatch_leases" (owner TEXT NOT NULL,
     host TEXT NOT NULL,
     pid BIGINT NOT NULL,
     directory TEXT NOT NULL,
     target_table TEXT NOT NULL,
     token BIGINT NOT NULL,
     started_at TIMESTAMPTZ NOT NULL,
     renewed_at TIMESTAMPTZ NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL,
     taken_by TEXT,
     holding BIGINT NOT NULL)`;

const OLD_FENCES_DDL =
  `CREATE TABLE IF NOT EXISTS "hyperwatch_fences" (owner TEXT NOT NULL, slot BIGINT NOT NULL, token BIGINT NOT NULL, uses ` +
  `BIGINT NOT NULL)`;

export interface OldLedgerRow {
  readonly claimId: string;
  readonly file: string;
  readonly rows: number;
  readonly table: string;
  readonly directory: string;
  /** ISO time. */
  readonly committedAt: string;
  readonly owner?: string;
}

export interface OldLease {
  readonly owner: string;
  readonly directory: string;
  readonly table: string;
  /** Expired this long ago (negative: expires in the future). */
  readonly expiredMsAgo: number;
  readonly slots: number;
}

/** The three old tables with `ledger` and `leases` (and their fence rows) in them. */
export async function makeOldLayout(
  pool: DbPool,
  content: { ledger: readonly OldLedgerRow[]; leases?: readonly OldLease[]; ledgerColumns?: 'first' | 'last' },
): Promise<void> {
  const first = content.ledgerColumns === 'first';
  for (const ddl of [first ? FIRST_LEDGER_DDL : OLD_LEDGER_DDL, OLD_LEASES_DDL, OLD_FENCES_DDL]) await pool.query(ddl);
  const q = (v: string) => `'${v.replaceAll("'", "''")}'`;
  for (let i = 0; i < content.ledger.length; i += 200) {
    const values = content.ledger.slice(i, i + 200).map((r) => {
      const common =
        `${q(r.claimId)}, ${q(r.file)}, 10, ${r.rows}, ${q(r.table)}, ${q(r.directory)}, CAST(${q(r.committedAt)} AS ` +
        `TIMESTAMPTZ), NULL`;
      return first ? `(${common})` : `(${common}, NULL, ${r.owner === undefined ? 'NULL' : q(r.owner)})`;
    });
    const columns =
      `claim_id, file_name, file_size, row_count, target_table, directory, committed_at, ` +
      `checksum${first ? '' : ', rows_rejected, owner'}`;
    await pool.query(`INSERT INTO "hyperwatch_ingest_log" (${columns}) VALUES ${values.join(', ')}`);
  }
  for (const l of content.leases ?? []) {
    const expires = `CURRENT_TIMESTAMP - INTERVAL '${Math.trunc(l.expiredMsAgo)} milliseconds'`;
    await pool.query(
      `INSERT INTO "hyperwatch_leases" (owner, host, pid, directory, target_table, token, started_at, renewed_at, ` +
        `expires_at, taken_by, holding)
       VALUES (${q(l.owner)}, 'old-host', 1, ${q(l.directory)}, ${q(l.table)}, 1, ${expires}, ${expires}, ${expires}, NULL, 1)`,
    );
    const fences = Array.from({ length: l.slots }, (_, slot) => `(${q(l.owner)}, ${slot}, 1, 0)`);
    await pool.query(`INSERT INTO "hyperwatch_fences" (owner, slot, token, uses) VALUES ${fences.join(', ')}`);
  }
}

/** Every table of `schema` (pg_catalog: the same on Hyper and PostgreSQL), sorted. */
export async function tablesIn(pool: DbPool, schema: string): Promise<string[]> {
  const rows = await pool.query<{ relname: string }>(
    `SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
      WHERE n.nspname = '${schema}' AND c.relkind = 'r' ORDER BY c.relname`,
  );
  return rows.map((r) => r.relname).sort();
}

/** What `oldInbox` made, to check against after the move. */
export interface OldInbox {
  readonly dir: string;
  /** Ledger rows in the old ledger (the settled files and the staged committed claim). */
  readonly ledgerRows: number;
  /** Rows the events table must hold once everything is settled, each id once. */
  readonly ids: readonly number[];
  /** The staged claim the old ledger lists (its rows are in the table already) and the one it does not. */
  readonly committedClaim: string;
  readonly uncommittedClaim: string;
}

/**
 * An inbox as an earlier version left it after its process died: `settled` files committed
 * (their rows in `public.events`, their ledger rows in the old ledger, 10 days old), and in the
 * dead process's staging folder one claim it committed (rows and ledger row in) and one it had
 * not (no rows, no ledger row); its lease, in the old lease table, expired a minute ago.
 */
export async function oldInbox(pool: DbPool, root: string, settled = 50): Promise<OldInbox> {
  const dir = join(root, 'inbox');
  const dead = 'old-host-4242-deadbeef';
  const staging = join(dir, '.hyperwatch', 'staging', dead);
  await mkdir(staging, { recursive: true });
  await pool.query('CREATE TABLE "public"."events" (id BIGINT, batch BIGINT)');
  const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000).toISOString();
  const ledger: OldLedgerRow[] = Array.from({ length: settled }, (_, i) => ({
    claimId: `0000old${String(i).padStart(4, '0')}-a`,
    file: `old-${i}.csv`,
    rows: 2,
    table: 'events',
    directory: dir,
    committedAt: tenDaysAgo,
    owner: dead,
  }));
  const committedClaim = '0000oldXXXX-committed';
  const uncommittedClaim = '0000oldXXXX-uncommitted';
  ledger.push({
    claimId: committedClaim,
    file: 'x.csv',
    rows: 2,
    table: 'events',
    directory: dir,
    committedAt: new Date(Date.now() - 120_000).toISOString(),
    owner: dead,
  });
  await makeOldLayout(pool, { ledger, leases: [{ owner: dead, directory: dir, table: 'events', expiredMsAgo: 60_000, slots: 10 }] });
  const ids: number[] = [];
  const values: string[] = [];
  for (let i = 0; i < settled; i++) {
    for (const id of [i * 2, i * 2 + 1]) {
      ids.push(id);
      values.push(`(${id}, ${i})`);
    }
  }
  values.push('(1000, 1000)', '(1001, 1000)');
  await pool.query(`INSERT INTO "public"."events" VALUES ${values.join(', ')}`);
  ids.push(1000, 1001, 2000, 2001);
  await writeFile(join(staging, `${committedClaim}~x.csv`), 'id,batch\n1000,1000\n1001,1000\n');
  await writeFile(join(staging, `${committedClaim}~x.csv.ready`), '');
  await writeFile(join(staging, `${uncommittedClaim}~y.csv`), 'id,batch\n2000,2000\n2001,2000\n');
  await writeFile(join(staging, `${uncommittedClaim}~y.csv.ready`), '');
  return { dir, ledgerRows: ledger.length, ids, committedClaim, uncommittedClaim };
}

/** Rows of the ledger, old and new together (a row must be in exactly one), by claim. */
export async function ledgerClaims(pool: DbPool): Promise<string[]> {
  const claims: string[] = [];
  for (const table of ['"public"."hyperwatch_ingest_log"', '"hyperwatch_internal"."ingest_log"']) {
    const exists = await pool.query(
      `SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid WHERE n.nspname || '.' ` +
        `|| c.relname = '${table.replaceAll('"', '')}'`,
    );
    if (exists.length === 0) continue;
    claims.push(...(await pool.query<{ claim_id: string }>(`SELECT claim_id FROM ${table}`)).map((r) => r.claim_id));
  }
  return claims.sort();
}
