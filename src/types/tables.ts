/**
 * Tables and column types as the core, the adapters and the plugins share them, independent of
 * any one database's SQL.
 */
/** A validated, unquoted table name. */
export interface TableName {
  readonly schema?: string;
  readonly name: string;
}

/**
 * Column types hyperwatch creates, independent of the database. Each DB adapter maps them to
 * its own SQL (see `SqlTypeMap`). Decimal carries precision and scale.
 */
export type LogicalType =
  | { readonly kind: 'boolean' }
  | { readonly kind: 'smallint' }
  | { readonly kind: 'integer' }
  | { readonly kind: 'bigint' }
  | { readonly kind: 'real' }
  | { readonly kind: 'double' }
  | { readonly kind: 'decimal'; readonly precision: number; readonly scale: number }
  | { readonly kind: 'text' }
  | { readonly kind: 'json' }
  | { readonly kind: 'bytes' }
  | { readonly kind: 'date' }
  | { readonly kind: 'time' }
  | { readonly kind: 'timestamp' }
  | { readonly kind: 'timestamptz' }
  | { readonly kind: 'interval' };

export interface ColumnSpec {
  readonly name: string;
  readonly type: LogicalType;
  /**
   * A type the user gave for the column (`columnTypes`), written into the DDL as given instead of
   * `type`'s SQL; `type` is then the logical type closest to it (TEXT when none is).
   */
  readonly sql?: string;
}

/** A column of an existing table, as the database describes it. */
export interface TableColumn {
  readonly name: string;
  /** The database's own spelling of the type, e.g. `bigint`, `numeric(18,3)`. */
  readonly sqlType: string;
  readonly nullable: boolean;
  /**
   * The database fills the column when an INSERT or COPY leaves it out: a DEFAULT (`serial`,
   * `DEFAULT now()`), an identity or a generated column. Such a column is never required of a
   * file. Undefined (an adapter that does not say) counts as false.
   */
  readonly filledByDatabase?: boolean;
}
