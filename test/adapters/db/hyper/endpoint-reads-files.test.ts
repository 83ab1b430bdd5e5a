/**
 * A hyperd the user runs (`--endpoint`) on the same host reads the claimed files itself when it
 * can: probed at start with a file in the staging folder (`auto`), or forced (`yes`/`no`). What
 * hyperd ran is read from its own log (`query-trunc`): `external('<staged path>'...)` and `COPY ... FROM '<path>'`
 * are reads of the file by the server, `FROM STDIN` is streaming.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Float64, Int64, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import postgres from 'postgres';
import { createHyperAdapter } from '../../../../adapters/db/hyper/index.ts';
import { openWatcher } from '../../../../src/api.ts';
import { STAGING_DIR } from '../../../../src/constants.ts';
import { validateWatcher } from '../../../../src/serve/config.ts';
import type { Logger } from '../../../../src/types.ts';
import { csv, drop, waitFor } from '../../../helpers/drop.ts';
import { removeDir, tempDir } from '../../../helpers/env.ts';
import { cli } from '../../../helpers/proc.ts';
import { type StandaloneHyperd, startStandaloneHyperd } from '../../../helpers/standalone-hyperd.ts';

const USER = 'probe_user';

function capture(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const push = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { lines, logger: { debug: push('debug'), info: push('info'), warn: push('warn'), error: push('error') } };
}

/** The statements hyperd logged that mention `needle` (a table name or a staged path). */
async function statements(logDir: string, needle: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(logDir)) {
    if (!name.endsWith('.log')) continue;
    for (const line of (await readFile(join(logDir, name), 'utf8')).split('\n')) {
      const match = /"query-trunc":"((?:[^"\\]|\\.)*)"/.exec(line);
      if (match && match[1]!.includes(needle)) out.push(JSON.parse(`"${match[1]}"`) as string);
    }
  }
  return out;
}

/** What hyperd did to load into `table`: read files itself (`server`), had them streamed, or both. */
async function loadsInto(logDir: string, table: string): Promise<{ server: number; streamed: number }> {
  const loads = (await statements(logDir, table)).filter((s) => /^\s*(COPY|INSERT)/i.test(s));
  return { server: loads.filter((s) => /external\(|FROM '/.test(s)).length, streamed: loads.filter((s) => /FROM STDIN/i.test(s)).length };
}

/** Of the types the CSV file's columns get (BIGINT, TEXT, DOUBLE PRECISION): Arrow that fits them as it is. */
function arrowFile(): Uint8Array {
  return tableToIPC(
    new Table({
      id: vectorFromArray([1n, 2n], new Int64()),
      name: vectorFromArray(['a', 'b'], new Utf8()),
      amount: vectorFromArray([1.5, 2.5], new Float64()),
    }),
    'file',
  );
}

describe('endpoint hyperds that can read the staging folder', () => {
  let root: string;
  let hyperd: StandaloneHyperd;
  let logDir: string;
  let parquet: Uint8Array;

  before(async () => {
    root = await tempDir('hyperwatch-endpoint-reads-');
    logDir = join(root, 'hyperd-log');
    await mkdir(logDir);
    hyperd = await startStandaloneHyperd({ user: USER, logDir });
    // A Parquet file as Hyper writes it, made by the same server.
    const sql = postgres({
      host: '127.0.0.1',
      port: hyperd.port,
      user: USER,
      database: '',
      fetch_types: false,
      prepare: false,
      onnotice: () => {},
    });
    try {
      await sql.unsafe(
        `COPY (SELECT i AS id, 'p' || i AS name, i * 0.5 AS amount FROM generate_series(1, 3) AS g(i)) TO ` +
          `'${join(root, 'seed.parquet')}' WITH (FORMAT parquet)`,
      );
    } finally {
      await sql.end();
    }
    parquet = await readFile(join(root, 'seed.parquet'));
  });
  after(async () => {
    await hyperd?.stop();
    await removeDir(root);
  });

  async function watchAndDrop(dir: string, table: string, open: (dir: string) => ReturnType<typeof openWatcher>): Promise<void> {
    await mkdir(dir, { recursive: true });
    const handle = await open(dir);
    try {
      await drop(
        dir,
        'a.csv',
        csv('id,name,amount', [
          [1, 'x', 0.5],
          [2, 'y', 1.5],
        ]),
      );
      await drop(dir, 'b.parquet', parquet);
      await drop(dir, 'c.arrow', arrowFile());
      await waitFor(() => handle.stats.filesIngested === 3, `3 files into ${table} (${JSON.stringify(handle.stats)})`, 60000);
      assert.equal(handle.stats.rowsIngested, 7);
    } finally {
      await handle.stop();
    }
  }

  it('auto: the probe finds that hyperd reads the staging folder, and CSV, Parquet and Arrow files are read by it', async () => {
    const dir = join(root, 'auto');
    const { logger, lines } = capture();
    await watchAndDrop(dir, 'auto_t', (d) =>
      openWatcher(d, 'auto_t', { endpoint: `${USER}@127.0.0.1:${hyperd.port}`, database: join(root, 'auto.hyper'), logger }),
    );
    assert.ok(
      lines.some((l) => /^info hyperd at 127\.0\.0\.1:\d+ reads the claimed files itself/.test(l)),
      lines.join('\n'),
    );
    assert.deepEqual(await loadsInto(logDir, 'auto_t'), { server: 3, streamed: 0 });
    // The probe file is gone.
    assert.deepEqual(
      (await readdir(join(dir, STAGING_DIR))).filter((n) => n.includes('probe')),
      [],
    );
  });

  it('forced no (--endpoint-reads-files no): the same files are streamed', async () => {
    const dir = join(root, 'no');
    await mkdir(dir);
    await drop(
      dir,
      'a.csv',
      csv('id,name,amount', [
        [1, 'x', 0.5],
        [2, 'y', 1.5],
      ]),
    );
    await drop(dir, 'b.parquet', parquet);
    await drop(dir, 'c.arrow', arrowFile());
    const run = await cli([
      'watch',
      dir,
      '--table',
      'no_t',
      '--once',
      '--endpoint',
      `${USER}@127.0.0.1:${hyperd.port}`,
      '--database',
      join(root, 'no.hyper'),
      '--endpoint-reads-files',
      'no',
    ]).done;
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(await loadsInto(logDir, 'no_t'), { server: 0, streamed: 3 });
    assert.doesNotMatch(run.stderr, /reads the claimed files|cannot read the claimed files/);
  });

  it('a wrong --endpoint-reads-files value or config field is refused, naming the choices', async () => {
    const run = await cli([
      'watch',
      join(root, 'none'),
      '--table',
      't',
      '--once',
      '--endpoint',
      '127.0.0.1:1',
      '--endpoint-reads-files',
      'maybe',
    ]).done;
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /--endpoint-reads-files is "maybe"\. Use --endpoint-reads-files auto, yes or no\./);
    const refused = await validateWatcher(
      { dir: root, table: 't', endpoint: '127.0.0.1:1', endpointReadsFiles: 'maybe' },
      { baseDir: root, env: {} },
    );
    assert.equal(refused.watcher, undefined);
    assert.ok(
      refused.issues.some((i) => i.path === 'endpointReadsFiles' && /"auto", "yes" or "no"/.test(i.fix)),
      JSON.stringify(refused.issues),
    );
    const ok = await validateWatcher(
      { dir: root, table: 't', endpoint: '127.0.0.1:1', endpointReadsFiles: 'no' },
      { baseDir: root, env: {} },
    );
    assert.equal(ok.watcher?.endpointReadsFiles, 'no');
  });

  it('auto: a probe file that cannot be written → streamed, with an info log saying why', async () => {
    const { logger, lines } = capture();
    const db = createHyperAdapter({
      endpoint: `${USER}@127.0.0.1:${hyperd.port}`,
      database: join(root, 'unwritable.hyper'),
      probeDir: join(root, 'seed.parquet', 'staging'),
      logger,
    });
    const pool = await db.openPool({ maxConnections: 1 });
    try {
      assert.equal(db.capabilities.readsLocalFiles, false);
      assert.ok(
        lines.some((l) =>
          /^info hyperd at .* cannot read the claimed files itself, so they are streamed to it: the probe file cannot be written/.test(l),
        ),
        lines.join('\n'),
      );
    } finally {
      await pool.close();
      await db.close();
    }
  });

  const unshare = spawnSync('unshare', ['-m', 'true']).status === 0;
  it('auto: a hyperd that sees another file system at the staging path (its own mount namespace) has the files streamed, with \
an info log', {
    skip: unshare ? false : 'unshare -m is not available here',
  }, async () => {
    const dir = join(root, 'hidden');
    await mkdir(dir);
    const hiddenLog = join(root, 'hidden-log');
    await mkdir(hiddenLog);
    // hyperd in a mount namespace where the watched folder is an empty tmpfs.
    const other = await startStandaloneHyperd({
      user: USER,
      logDir: hiddenLog,
      wrap: (command, args) => ['unshare', '-m', 'sh', '-c', `mount -t tmpfs none "$0" && exec "$@"`, dir, command, ...args],
    });
    try {
      const { logger, lines } = capture();
      await watchAndDrop(dir, 'hidden_t', (d) =>
        openWatcher(d, 'hidden_t', { endpoint: `${USER}@127.0.0.1:${other.port}`, database: join(root, 'hidden.hyper'), logger }),
      );
      assert.ok(
        lines.some((l) =>
          /^info hyperd at .* cannot read the claimed files itself, so they are streamed to it: hyperd cannot read .*hyperwatch-probe/.test(
            l,
          ),
        ),
        lines.join('\n'),
      );
      assert.deepEqual(await loadsInto(hiddenLog, 'hidden_t'), { server: 0, streamed: 3 });
    } finally {
      await other.stop();
    }
  });
});
