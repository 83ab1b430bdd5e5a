/**
 * The ingest ledger: one row per committed file, inserted in the same transaction as the file's
 * rows. A claim id found here was committed, whatever happened to the process afterwards; so on
 * recovery and before a retry, the ledger tells "only clean-up missing" from "never committed".
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LEASE_TABLE, LEDGER_TABLE } from '../constants.ts';
import { ensureOwnSchema, ensureOwnTable, racing } from './own-tables.ts';
import { qualifiedName, quoteLiteral } from '../columns/sql.ts';
import type { DbConnection, DbPool, Statement } from '../types.ts';

const LEDGER = qualifiedName(LEDGER_TABLE);

export interface LedgerEntry {
  readonly claimId: string;
  readonly fileName: string;
  readonly fileSize: number;
  readonly rows: number;
  readonly targetTable: string;
  readonly directory: string;
  readonly checksum?: string;
  /** Rows left out as bad (`onBadRows: 'skip'`); NULL when bad rows fail the file. */
  readonly rowsRejected?: number;
  /** The process that committed it (its lease owner id). */
  readonly owner?: string;
}

/** The ledger's columns, as this version creates it. */
const LEDGER_COLUMNS = `claim_id TEXT NOT NULL,
     file_name TEXT NOT NULL,
     file_size BIGINT NOT NULL,
     row_count BIGINT NOT NULL,
     target_table TEXT NOT NULL,
     directory TEXT NOT NULL,
     committed_at TIMESTAMPTZ NOT NULL,
     checksum TEXT,
     rows_rejected BIGINT,
     owner TEXT`;

/**
 * Creates the ledger (and its schema) when missing, retrying the race of two processes creating
 * it at once (see own-tables.ts), and adds the columns later versions brought (`rows_rejected`,
 * `owner`) to an older one.
 */
export async function ensureLedger(pool: DbPool): Promise<void> {
  await ensureOwnSchema(pool);
  await ensureOwnTable(pool, LEDGER_TABLE, LEDGER_COLUMNS);
  // A ledger from before rows_rejected or owner: add them (NULL for its rows). Another process may
  // add one at the same moment. Described once for both: a ledger that has them is the rule.
  const columns = await racing(() => pool.transaction((conn) => conn.describeTable(LEDGER_TABLE)));
  for (const [name, type] of [
    ['rows_rejected', 'BIGINT'],
    ['owner', 'TEXT'],
  ] as const) {
    if (!columns || columns.some((c) => c.name === name)) continue;
    try {
      await pool.query(`ALTER TABLE ${LEDGER} ADD COLUMN IF NOT EXISTS ${name} ${type}`);
    } catch (error) {
      const again = await racing(() => pool.transaction((conn) => conn.describeTable(LEDGER_TABLE)));
      if (!again?.some((c) => c.name === name)) throw error;
    }
  }
}

const COLUMNS = '(claim_id, file_name, file_size, row_count, target_table, directory, committed_at, checksum, rows_rejected, owner)';

function values(e: LedgerEntry): readonly (string | number | null)[] {
  return [
    e.claimId,
    e.fileName,
    e.fileSize,
    e.rows,
    e.targetTable,
    e.directory,
    e.checksum ?? null,
    e.rowsRejected ?? null,
    e.owner ?? null,
  ];
}

/**
 * `'...'` is a plain string literal whatever `standard_conforming_strings` says as long as there
 * is no backslash in it; a value with one goes as a parameter instead.
 */
function literal(value: string | number | null): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') return String(Math.trunc(value));
  return quoteLiteral(value);
}

/**
 * From this many rows on, the ledger rows go in with `COPY ... FROM STDIN`: its statement text
 * never changes, so hyperd does not plan it anew, while a multi-row INSERT is a new statement every
 * time (100 rows: 2.4 ms by COPY, 9.6 ms by literal INSERT, 10.1 ms by prepared INSERT).
 */
const LEDGER_COPY_ROWS = 4;

/** A CSV field: always quoted (so no line can read as PostgreSQL's `\.` end marker); null empty. */
function csvField(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(Math.trunc(value));
  return `"${value.replaceAll('"', '""')}"`;
}

async function* once(text: string): AsyncIterable<string> {
  yield text;
}

/** `committed_at` for COPY, which cannot say CURRENT_TIMESTAMP: this process's clock, in UTC. */
function timestampText(date: Date): string {
  return `${date.toISOString().replace('T', ' ').replace('Z', '')}+00`;
}

/** Whether this many rows go in by COPY (`recordAllInLedger`) rather than as one INSERT (`ledgerInsert`). */
export function ledgerByCopy(rows: number): boolean {
  return rows >= LEDGER_COPY_ROWS;
}

/**
 * One INSERT for a few rows (at most 500), with the values inlined as literals: a parameterized
 * INSERT costs hyperd an extra 1-1.5 ms per statement here. A value with a backslash goes as a
 * parameter instead. The watcher sends it together with the COMMIT (see `TransactionOptions.last`).
 */
export function ledgerInsert(entries: readonly LedgerEntry[]): Statement {
  const rows = entries.map(values);
  if (rows.some((row) => row.some((v) => typeof v === 'string' && v.includes('\\')))) {
    // committed_at (the 7th column) is the database's CURRENT_TIMESTAMP; every other value a parameter.
    const width = rows[0]!.length;
    const placeholders = rows.map((_, k) => {
      const p = Array.from({ length: width }, (_, i) => `$${k * width + i + 1}`);
      return `(${[...p.slice(0, 6), 'CURRENT_TIMESTAMP', ...p.slice(6)].join(', ')})`;
    });
    return { text: `INSERT INTO ${LEDGER} ${COLUMNS} VALUES ${placeholders.join(', ')}`, params: rows.flat() };
  }
  const inlined = rows.map((row) => `(${[...row.slice(0, 6).map(literal), 'CURRENT_TIMESTAMP', ...row.slice(6).map(literal)].join(', ')})`);
  return { text: `INSERT INTO ${LEDGER} ${COLUMNS} VALUES ${inlined.join(', ')}` };
}

const LEDGER_SCRATCH_PREFIX = '.ledger-';

/** The name of the file `recordAllInLedger` writes for the server to read (never a staged claim's: no `~`). */
export function isLedgerScratch(name: string): boolean {
  return name.startsWith(LEDGER_SCRATCH_PREFIX);
}

/** A path for that file in `folder` (the process's staging folder), `unique` naming its transaction. */
export function ledgerScratchPath(folder: string, unique: string): string {
  return join(folder, `${LEDGER_SCRATCH_PREFIX}${unique}.csv`);
}

/**
 * One row per file: by COPY for many (see `LEDGER_COPY_ROWS`), else INSERTs of up to 500 rows.
 *
 * `serverReads`: a path where the rows may be written for the server to read them itself (a
 * database with `readsLocalFiles`), instead of streaming them through `COPY ... FROM STDIN`. On a
 * shared hyperd this is what keeps a process killed in the moment between that COPY's start and
 * its data from leaving a COPY that hyperd never ends, which holds the ledger (every directory's
 * commits on that server) until another process cancels it and hyperd's 10 s read timeout runs
 * out. The file is removed once the statement ends; one left by a crash is removed with the
 * folder by whoever takes it over.
 */
export async function recordAllInLedger(conn: DbConnection, entries: readonly LedgerEntry[], serverReads?: string): Promise<void> {
  if (ledgerByCopy(entries.length)) {
    const now = timestampText(new Date());
    const body = entries
      .map((e) => {
        const row = values(e).map(csvField);
        return `${[...row.slice(0, 6), now, ...row.slice(6)].join(',')}\n`;
      })
      .join('');
    let copied: number;
    if (serverReads === undefined) {
      copied = await conn.copyFrom(`COPY ${LEDGER} ${COLUMNS} FROM STDIN WITH (FORMAT csv)`, once(body));
    } else {
      await writeFile(serverReads, body);
      try {
        copied = await conn.execute(`COPY ${LEDGER} ${COLUMNS} FROM ${quoteLiteral(serverReads)} WITH (FORMAT csv)`);
      } finally {
        await rm(serverReads, { force: true });
      }
    }
    if (copied !== entries.length) throw new Error(`the ledger took ${copied} rows for ${entries.length} files`);
    return;
  }
  for (let i = 0; i < entries.length; i += 500) {
    const { text, params } = ledgerInsert(entries.slice(i, i + 500));
    await conn.query(text, params);
  }
}

/** Of `checksums`, those already in the ledger for `targetTable`, with the file that brought each. */
export async function committedChecksums(pool: DbPool, targetTable: string, checksums: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  // Hex digests only (checked by the caller), so they are safe as literals; see committedClaims.
  for (let i = 0; i < checksums.length; i += 500) {
    const list = checksums
      .slice(i, i + 500)
      .map(quoteLiteral)
      .join(', ');
    const rows = await pool.query<{ checksum: string; file_name: string }>(
      `SELECT checksum, file_name FROM ${LEDGER} WHERE target_table = ${quoteLiteral(targetTable)} AND checksum IN (${list})`,
    );
    for (const row of rows) if (!found.has(row.checksum)) found.set(row.checksum, row.file_name);
  }
  return found;
}

/** The claim ids among `claimIds` that were committed. */
export async function committedClaims(pool: DbPool | DbConnection, claimIds: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  // Inlined as literals: hyperd cannot type parameters inside IN (...). Claim ids come from staged
  // file names, which anyone with write access to staging could craft, so quote them.
  for (let i = 0; i < claimIds.length; i += 500) {
    const list = claimIds
      .slice(i, i + 500)
      .map(quoteLiteral)
      .join(', ');
    const rows = await pool.query<{ claim_id: string }>(`SELECT claim_id FROM ${LEDGER} WHERE claim_id IN (${list})`);
    for (const row of rows) found.add(row.claim_id);
  }
  return found;
}

/** What `pruneLedger` removes: rows of `directory` older than `olderThanMs`, but for those kept. */
export interface LedgerPrune {
  readonly directory: string;
  readonly olderThanMs: number;
  /** Claims still staged: recovery asks the ledger about them. */
  readonly keepClaims: readonly string[];
}

/**
 * Removes the ledger rows of `directory` committed longer than `olderThanMs` ago (by the database's
 * clock), except those of `keepClaims` and those committed by a process that still has a lease
 * row: alive, or dead and not yet taken over, its staged claims (wherever they are now, on any
 * host) are settled by these rows. Returns how many went.
 */
export async function pruneLedger(pool: DbPool, prune: LedgerPrune): Promise<number> {
  // Seconds: Hyper refuses an interval literal of 7776000000 milliseconds (90 days).
  const seconds = Math.max(0, Math.floor(prune.olderThanMs / 1000));
  const keep = prune.keepClaims.length > 0 ? ` AND claim_id NOT IN (${prune.keepClaims.map(quoteLiteral).join(', ')})` : '';
  return pool.transaction((conn) =>
    conn.execute(
      `DELETE FROM ${LEDGER} WHERE directory = ${quoteLiteral(prune.directory)} AND committed_at < CURRENT_TIMESTAMP - ` +
        `INTERVAL '${seconds} seconds'
          AND (owner IS NULL OR owner NOT IN (SELECT owner FROM ${qualifiedName(LEASE_TABLE)}))${keep}`,
    ),
  );
}
