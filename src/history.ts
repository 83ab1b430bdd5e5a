/** Reading the ingest ledger back: what was committed when, into which table, with how many rows. */
import { LEDGER_TABLE } from './constants.ts';
import { quoteIdent, quoteLiteral } from './sql.ts';
import type { DbPool } from './types.ts';

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

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * `--since`: an ISO date or time (`2024-06-01`, `2024-06-01T12:00:00Z`) or a duration back from
 * `now` (`90s`, `15m`, `2h`, `7d`, `1w`, `1h30m`). Undefined when it is neither.
 */
export function parseSince(value: string, now = Date.now()): Date | undefined {
  const duration = /^(?:\d+[smhdw])+$/i.test(value) ? value.toLowerCase().match(/\d+[smhdw]/g) : null;
  if (duration) return new Date(now - duration.reduce((ms, part) => ms + Number(part.slice(0, -1)) * UNITS[part.slice(-1)]!, 0));
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

function iso(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  const ms = Date.parse(String(value));
  return Number.isNaN(ms) ? String(value) : new Date(ms).toISOString();
}

/** The ledger's entries, oldest first; empty when nothing was ever ingested into this database. */
export async function readHistory(pool: DbPool, query: HistoryQuery = {}): Promise<HistoryEntry[]> {
  const exists = await pool.transaction((conn) => conn.describeTable({ name: LEDGER_TABLE }));
  if (!exists) return [];
  // Literals, not parameters: hyperd cannot always type a parameter compared with a timestamp.
  const where = [
    query.since ? `committed_at >= CAST(${quoteLiteral(query.since.toISOString())} AS TIMESTAMPTZ)` : 'TRUE',
    query.table ? `target_table = ${quoteLiteral(query.table)}` : 'TRUE',
  ].join(' AND ');
  // A ledger no watcher of this version has opened yet lacks rows_rejected and owner.
  const rejected = exists.some((c) => c.name === 'rows_rejected') ? 'rows_rejected' : 'NULL AS rows_rejected';
  const owner = exists.some((c) => c.name === 'owner') ? 'owner' : 'NULL AS owner';
  const rows = await pool.query<Record<string, unknown>>(
    `SELECT committed_at, file_name, target_table, row_count, file_size, directory, claim_id, checksum, ${rejected}, ${owner}
       FROM ${quoteIdent(LEDGER_TABLE)} WHERE ${where} ORDER BY committed_at, claim_id`,
  );
  return rows.map((r) => ({
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
  }));
}
