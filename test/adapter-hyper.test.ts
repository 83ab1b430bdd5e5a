import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Hyperd } from '../adapters/db/hyper/hyperd.ts';
import { locateHyperd } from '../adapters/db/hyper/locate.ts';
import { silentLogger } from '../src/log.ts';
import { count, useHyperFixture } from './helpers/env.ts';
import { checkBegunTransaction } from './helpers/begun-transaction.ts';
import { checkLastWithCommit } from './helpers/transaction-last.ts';

async function* chunks(...parts: string[]): AsyncIterable<string> {
  yield* parts;
}

describe('hyper adapter', () => {
  const fx = useHyperFixture();

  it('creates the database and runs queries', async () => {
    const rows = await fx.pool.query<{ x: number }>('SELECT 1 + 1 AS x');
    assert.equal(Number(rows[0]!.x), 2);
  });

  it('copyFrom reports the row count', async () => {
    await fx.pool.query('CREATE TABLE c1 (a BIGINT, b TEXT)');
    const n = await fx.pool.transaction((conn) => conn.copyFrom('COPY c1 FROM STDIN WITH (FORMAT csv, HEADER true)', chunks('a,b\n', '1,x\n2,y\n3,z\n')));
    assert.equal(n, 3);
    assert.equal(await count(fx.pool, 'c1'), 3);
  });

  it('copyFrom rejects (and rolls back) when the last chunk holds a bad row, instead of hanging', async () => {
    await fx.pool.query('CREATE TABLE c2 (a BIGINT, b TEXT)');
    await assert.rejects(
      fx.pool.transaction(async (conn) => {
        await conn.query(`INSERT INTO c2 VALUES (100, 'before')`);
        return conn.copyFrom('COPY c2 FROM STDIN WITH (FORMAT csv, HEADER true)', chunks('a,b\n1,x\n', 'oops,y\n'));
      }),
      (error: { code?: string; detail?: string }) => error.code === '22P02' && /line:\s*3/.test(error.detail ?? ''),
    );
    assert.equal(await count(fx.pool, 'c2'), 0);
  });

  it('copyFrom rejects with the source error when reading the input fails', async () => {
    await fx.pool.query('CREATE TABLE c3 (a BIGINT)');
    async function* broken(): AsyncIterable<string> {
      yield 'a\n1\n';
      throw Object.assign(new Error('disk on fire'), { code: 'EIO' });
    }
    await assert.rejects(
      fx.pool.transaction((conn) => conn.copyFrom('COPY c3 FROM STDIN WITH (FORMAT csv, HEADER true)', broken())),
      /disk on fire/,
    );
    assert.equal(await count(fx.pool, 'c3'), 0);
  });

  it("sends a transaction's last statement with its COMMIT; when it fails, nothing of the transaction is kept", async () => {
    await checkLastWithCommit(fx.pool, 'last_with_commit');
  });

  it('begins a transaction early on an idle connection: its work stays inside it, and an unused one gives the connection back', async () => {
    await checkBegunTransaction(fx.pool, 'begun_early');
  });

  it('describeTable returns columns, or null for a missing table', async () => {
    await fx.pool.query('CREATE TABLE "MiXed" ("Id" BIGINT NOT NULL, note TEXT)');
    const cols = await fx.pool.transaction((conn) => conn.describeTable({ name: 'MiXed' }));
    assert.deepEqual(cols, [
      { name: 'Id', sqlType: 'bigint', nullable: false },
      { name: 'note', sqlType: 'text', nullable: true },
    ]);
    assert.equal(await fx.pool.transaction((conn) => conn.describeTable({ name: 'nope' })), null);
  });
});

describe('embedded hyperd', () => {
  it('removes the log directories of killed processes when it starts', async () => {
    const located = locateHyperd();
    assert.ok(located.ok, 'hyperd is installed');
    // Above the kernel's largest pid (2^22), so no process can have it.
    const stale = join(tmpdir(), 'hyperwatch-hyperd-4194305-test');
    mkdirSync(stale, { recursive: true });
    writeFileSync(join(stale, 'hyperd.log'), 'old');
    const hyperd = new Hyperd({ binary: located.path, logger: silentLogger });
    try {
      await hyperd.endpoint();
      assert.equal(existsSync(stale), false, 'the dead process’s log directory is gone');
      const args = readFileSync(`/proc/${hyperd.pid}/cmdline`, 'utf8').split('\0');
      const logDir = args.find((a) => a.startsWith('--log-dir='))!.slice('--log-dir='.length);
      assert.match(logDir, new RegExp(`hyperwatch-hyperd-${process.pid}-`), 'its own is named after this process');
    } finally {
      await hyperd.stop();
    }
  });
});
