/** Reading the ingest ledger back: what was committed when, into which table, with how many rows. */
import { LEDGER_TABLE, OLD_LEDGER_TABLE } from '../constants.ts';
import { parseDuration } from '../util/duration.ts';
import { qualifiedName, quoteLiteral } from '../columns/sql.ts';
import type { DbPool, TableName } from '../types.ts';

export interface HistoryEntry {
  readonly committedAt: string;
  readonly file: string;
  readonly table: string;
  readonly rows: number;
  readonly bytes: number;
  readonly directory: string;
  readonly claimId: string;
  readonly checksum: string | null;
  /** Rows left out as bad (`onBadRows: 'skip'`); null when bad rows failed the file then. */
  readonly rowsRejected: number | null;
  /** The process that committed it (its lease owner id); null for files committed before owners. */
  readonly owner: string | null;
}

export interface HistoryQuery {
  /** Only files committed at or after this time. */
  readonly since?: Date;
  /** Only files appended to this table (as the ledger spells it, e.g. `events` or `sales.orders`). */
  readonly table?: string;
}

/**
 * `--since`: an ISO date or time (`2024-06-01`, `2024-06-01T12:00:00Z`) or a duration back from
 * `now` (`90s`, `15m`, `2h`, `7d`, `1w`, `1h30m`). Undefined when it is neither.
 */
export function parseSince(value: string, now = Date.now()): Date | undefined {
  const duration = parseDuration(value);
  if (duration !== undefined) return new Date(now - duration);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

function iso(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  const ms = Date.parse(String(value));
  return Number.isNaN(ms) ? String(value) : new Date(ms).toISOString();
}

/**
 * The ledger's entries, oldest first; empty when nothing was ever ingested into this database.
 * A database no watcher of this version has started on yet has its ledger where earlier versions
 * kept it (`public.hyperwatch_ingest_log`): read there too, as after a move the next start
 * finishes (own-layout.ts; a row is in one of the two, never in both).
 */
export async function readHistory(pool: DbPool, query: HistoryQuery = {}): Promise<HistoryEntry[]> {
  const current = await readLedger(pool, LEDGER_TABLE, query);
  const old = await readLedger(pool, OLD_LEDGER_TABLE, query);
  if (old.length === 0) return current.map(toEntry);
  // Each list is in the database's order already; merged by time (a stable sort keeps that order within a millisecond).
  const at = (r: Record<string, unknown>) => Date.parse(iso(r.committed_at));
  return [...old, ...current].sort((a, b) => at(a) - at(b)).map(toEntry);
}

async function readLedger(pool: DbPool, ledger: TableName, query: HistoryQuery): Promise<Record<string, unknown>[]> {
  const exists = await pool.transaction((conn) => conn.describeTable(ledger));
  if (!exists) return [];
  // Literals, not parameters: hyperd cannot always type a parameter compared with a timestamp.
  const where = [
    query.since ? `committed_at >= CAST(${quoteLiteral(query.since.toISOString())} AS TIMESTAMPTZ)` : 'TRUE',
    query.table ? `target_table = ${quoteLiteral(query.table)}` : 'TRUE',
  ].join(' AND ');
  // A ledger no watcher of this version has opened yet lacks rows_rejected and owner.
  const rejected = exists.some((c) => c.name === 'rows_rejected') ? 'rows_rejected' : 'NULL AS rows_rejected';
  const owner = exists.some((c) => c.name === 'owner') ? 'owner' : 'NULL AS owner';
  return pool.query<Record<string, unknown>>(
    `SELECT committed_at, file_name, target_table, row_count, file_size, directory, claim_id, checksum, ${rejected}, ${owner}
       FROM ${qualifiedName(ledger)} WHERE ${where} ORDER BY committed_at, claim_id`,
  );
}

function toEntry(r: Record<string, unknown>): HistoryEntry {
  return {
    committedAt: iso(r.committed_at),
    file: String(r.file_name),
    table: String(r.target_table),
    rows: Number(r.row_count),
    bytes: Number(r.file_size),
    directory: String(r.directory),
    claimId: String(r.claim_id),
    checksum: r.checksum === null || r.checksum === undefined ? null : String(r.checksum),
    rowsRejected: r.rows_rejected === null || r.rows_rejected === undefined ? null : Number(r.rows_rejected),
    owner: r.owner === null || r.owner === undefined ? null : String(r.owner),
  };
}
