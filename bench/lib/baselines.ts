/**
 * The raw loads hyperwatch is compared with: hyperd loading the same file into a pre-created
 * table of the same database, with no watcher around it. Each returns the seconds the load took
 * as its client saw them (connection already open, table already there).
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { TABLEAU_ROLE } from '../../adapters/db/hyper/file-role.ts';
import { copyFrom, type Sql } from '../../adapters/db/postgres-js/pool.ts';
import { quoteIdent, quoteLiteral } from '../../src/columns/sql.ts';
import { now } from './measure.ts';
import { freshTable, type Server, withSession } from './server.ts';

const CSV = '(FORMAT csv, HEADER true)';

export interface Baseline {
  readonly name: string;
  /** What was run, for the report. */
  readonly how: string;
  run(server: Server, database: string, table: string, path: string): Promise<number>;
}

/** Times `load` on a fresh session with a fresh table; returns seconds. */
async function timed(server: Server, database: string, table: string, load: (sql: Sql) => Promise<unknown>): Promise<number> {
  return withSession(server, database, async (sql) => {
    await freshTable(sql, table);
    const start = now();
    await load(sql);
    return (now() - start) / 1000;
  });
}

export const serverCopy: Baseline = {
  name: 'hyperd COPY FROM path',
  how: `COPY t FROM 'path' WITH ${CSV} (hyperd reads the file itself)`,
  run: (server, database, table, path) =>
    timed(server, database, table, (sql) => sql.unsafe(`COPY ${quoteIdent(table)} FROM ${quoteLiteral(path)} WITH ${CSV}`)),
};

/** hyperd decompresses a `.csv.gz` itself (by its extension) while it loads it. */
export const serverCopyGzip: Baseline = {
  name: 'hyperd COPY FROM path.csv.gz',
  how: `COPY t FROM 'path.csv.gz' WITH ${CSV} (hyperd reads and decompresses the file itself)`,
  run: serverCopy.run,
};

export const clientCopy: Baseline = {
  name: 'postgres.js COPY FROM STDIN',
  how: `COPY t FROM STDIN WITH ${CSV}, the file streamed in 1 MB chunks by postgres.js`,
  run: (server, database, table, path) =>
    timed(server, database, table, (sql) =>
      copyFrom(sql, `COPY ${quoteIdent(table)} FROM STDIN WITH ${CSV}`, createReadStream(path, { highWaterMark: 1024 * 1024 })),
    ),
};

/** psql's `\copy`: the client reads the file and sends it (the classic client-side load). */
export const psqlCopy: Baseline = {
  name: 'psql \\copy',
  how: `psql -c "\\copy t FROM 'path' WITH ${CSV}" (includes psql's start, about 20 ms)`,
  async run(server, database, table, path) {
    await withSession(server, database, (sql) => freshTable(sql, table));
    const start = now();
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        'psql',
        [
          '-X',
          '-q',
          '-v',
          'ON_ERROR_STOP=1',
          '-h',
          server.host,
          '-p',
          String(server.port),
          '-U',
          // The role the bench's hyperd runs as (server.ts), as Tableau's tools start it.
          TABLEAU_ROLE,
          '-d',
          database,
          '-c',
          `\\copy ${quoteIdent(table)} FROM ${quoteLiteral(path)} WITH ${CSV}`,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`psql exited ${code}: ${stderr.trim()}`))));
    });
    return (now() - start) / 1000;
  },
};

export const parquetExternal: Baseline = {
  name: 'hyperd INSERT ... external()',
  how: `INSERT INTO t SELECT * FROM external('path', FORMAT => 'parquet')`,
  run: (server, database, table, path) =>
    timed(server, database, table, (sql) =>
      sql.unsafe(`INSERT INTO ${quoteIdent(table)} SELECT * FROM external(${quoteLiteral(path)}, FORMAT => 'parquet')`),
    ),
};

/** Hyper reads an Arrow IPC stream itself too (`FORMAT arrowstream`); the file is that stream. */
export const arrowStreamCopy: Baseline = {
  name: 'hyperd COPY FROM path (arrowstream)',
  how: `COPY t FROM 'path.arrows' WITH (FORMAT arrowstream), same rows as an IPC stream`,
  run: (server, database, table, path) =>
    timed(server, database, table, (sql) => sql.unsafe(`COPY ${quoteIdent(table)} FROM ${quoteLiteral(path)} WITH (FORMAT arrowstream)`)),
};
