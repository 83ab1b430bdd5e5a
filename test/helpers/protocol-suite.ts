/**
 * The sentinel protocol end to end, for any database: one set of cases that
 * test/src/watcher/watcher.test.ts runs on an embedded hyperd and
 * test/src/watcher/postgres.test.ts on a PostgreSQL server, so that both adapters are
 * held to the same behaviour. What only one database does (Hyper's checkpoints, PostgreSQL's
 * `\.` end marker, restarts, ...) stays in that database's test file.
 */
import type { WatchBench } from './watch-bench.ts';
import { archiveCases } from './archive-suite.ts';
import { compressionCases } from './compression-suite.ts';
import { evolutionCases } from './evolution-suite.ts';
import { failureCases } from './protocol-failure-cases.ts';
import { ingestCases } from './protocol-ingest-cases.ts';
import { lifecycleCases } from './protocol-lifecycle-cases.ts';
import { textFileCases } from './text-files-suite.ts';

export interface ProtocolExpectations {
  /** What the adapter's `describe()` must say (a stop summary reports it); read once the suite runs. */
  readonly description: () => string;
  /**
   * The database's commits are durable when they return (PostgreSQL): a file's staged copy goes
   * at once and no checkpoint is taken. Otherwise (Hyper) a checkpoint makes the commits durable
   * before the staged copies go. Stated by the test file, not read from the adapter, so that a
   * wrong capability fails here.
   */
  readonly durableCommit: boolean;
  /**
   * The report's message for `5,not-a-number` in a BIGINT column `amount` (line 3, column 2):
   * the file, line and column are the watcher's, the wording between them the database's.
   */
  readonly badNumberMessage: RegExp;
  /**
   * The database fills a column with a DEFAULT that a load leaves out (PostgreSQL). hyperd's COPY
   * does not: an omitted nullable column is NULL, and a NOT NULL one must be in the file.
   */
  readonly fillsDefaults: boolean;
  /**
   * Writes a Parquet file of columns `id` BIGINT and `name` TEXT (ids 11 to 14, names `pq-<id>`)
   * to `path` and returns its bytes, where the database can write one (Hyper's COPY ... TO);
   * PostgreSQL writes no Parquet, and its own test file covers Parquet.
   */
  readonly mixedParquet?: (path: string) => Promise<Uint8Array>;
}

/** Registers the protocol's cases in the enclosing `describe`, on the bench's database. */
export function protocolCases(t: WatchBench, expect: ProtocolExpectations): void {
  evolutionCases(t);
  ingestCases(t, expect);
  failureCases(t, expect);
  lifecycleCases(t);
  archiveCases(t);
  textFileCases(t, expect.fillsDefaults);
  compressionCases(t);
}
