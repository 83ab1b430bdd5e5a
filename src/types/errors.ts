/**
 * The failure contract: what every plugin, adapter and core step returns when a file cannot be
 * loaded, and what the `.error` file next to a failed file holds.
 */
/**
 * What went wrong, by what the operator should do about it:
 * - `data`: the file's content is wrong (fix the producer, then replay the file);
 * - `schema`: the file does not fit the table (columns or types);
 * - `io`: the file could not be read;
 * - `security`: the data file was a symlink, FIFO, device or directory, or was swapped;
 * - `transient`: the database was away; retried, never a reason to fail a file;
 * - `config`: the watcher itself is misconfigured (unknown extension, bad table name).
 */
export const ERROR_KINDS = ['data', 'schema', 'io', 'security', 'transient', 'config'] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** A failure, as a value. Serialized as-is (minus `cause`) into `failed/<name>.error`. */
export interface IngestError {
  readonly kind: ErrorKind;
  /** Stable machine-readable code, e.g. `CSV_HEADER_MISMATCH`, `EMPTY_FILE`, `DB_22P02`. */
  readonly code: string;
  readonly message: string;
  /** What the operator should do about it. */
  readonly hint: string;
  /** The data file's name as the producer dropped it. */
  readonly file?: string;
  /** 1-based line (CSV, JSON lines) or record number where known. */
  readonly line?: number;
  /** 1-based column number or column name where known. */
  readonly column?: number | string;
  /**
   * Set by a plugin when a fresh transaction can succeed where this one failed, e.g. after
   * widening a column type it had inferred. The core retries at once (a few times at most), and
   * `IngestContext.fileState` carries what the plugin learned to the next attempt.
   */
  readonly retry?: { readonly reason: string };
  /** SQLSTATE when the database reported the error. */
  readonly sqlState?: string;
  /** The statement the database rejected. */
  readonly sql?: string;
  readonly cause?: unknown;
}
