/**
 * The sentinel protocol end to end, on a real embedded hyperd: the shared protocol cases
 * (test/helpers/protocol-suite.ts, also run on PostgreSQL), and what only Hyper does.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe } from 'node:test';
import { hyperFixture } from '../../helpers/env.ts';
import { protocolCases } from '../../helpers/protocol-suite.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

describe('watcher on a real hyperd', () => {
  /** One hyperd and database for the suite; a fresh inbox and table per test. */
  const t = useWatchBench(hyperFixture, 't');

  protocolCases(t, {
    description: () => `hyper ${join(t.root, 'test.hyper')} (embedded hyperd)`,
    // Hyper writes a database to disk only when it unloads it: a checkpoint does that.
    durableCommit: false,
    fillsDefaults: false,
    badNumberMessage: /^bad.csv: invalid input syntax .*\(line 3, column 2 "amount"\)$/,
    // The Parquet file comes from hyperd's own COPY ... TO.
    mixedParquet: async (path) => {
      await t.pool.query(
        `COPY (SELECT CAST(g AS BIGINT) AS id, 'pq-' || g AS name FROM generate_series(11, 14) g) TO '${path}' WITH (FORMAT parquet)`,
      );
      return readFile(path);
    },
  });
});
