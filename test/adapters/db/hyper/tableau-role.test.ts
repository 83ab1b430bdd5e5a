/**
 * The role of the `.hyper` files hyperwatch makes: Tableau's (`tableau_internal_user`), so that a
 * hyperd started as Tableau's Hyper API starts it opens them; files of another role (those made
 * by earlier hyperwatch releases belong to `hyperwatch`) are opened as their own role and keep working.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type postgres from 'postgres';
import { createHyperAdapter, fileRole, LEGACY_ROLE, TABLEAU_ROLE } from '../../../../adapters/db/hyper/index.ts';
import { openWatcher } from '../../../../src/api.ts';
import { dropFile } from '../../../../src/producer/drop.ts';
import { lineLogger } from '../../../../src/log.ts';
import { WatcherRegistry } from '../../../../src/registry.ts';
import { csv, waitFor } from '../../../helpers/drop.ts';
import { useTempDir } from '../../../helpers/env.ts';
import { cli } from '../../../helpers/proc.ts';
import { useRoleServers } from '../../../helpers/role-servers.ts';

describe('the role of the .hyper files', () => {
  const tmp = useTempDir('hyperwatch-tableau-role-');
  const { on } = useRoleServers(() => tmp.path());

  const ids = async (sql: postgres.Sql) => (await sql.unsafe('SELECT id FROM t ORDER BY id')).map((r) => Number(r.id));

  it("hyperwatch watch makes a file that Tableau's hyperd opens, rows included, also after a watcher wrote it for a while", async () => {
    const inbox = await tmp.dir('cli');
    const database = tmp.path('cli.hyper');
    await dropFile(inbox, 'a.csv', csv('id', [[1], [2]]));
    const run = await cli(['watch', inbox, '--table', 't', '--database', database, '--once']).done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(fileRole(database), TABLEAU_ROLE);
    assert.deepEqual(await on('tableau', database, ids), [1, 2]);
    // The old role is refused it, as hyperd refuses every role but the owner.
    await assert.rejects(on('legacy', database, ids), /access denied/);

    // A watcher that runs for a while: files in several transactions and checkpoints, idle releases.
    const db = createHyperAdapter({ database, releaseIdleMs: 200 });
    const handle = await openWatcher(inbox, 't', { db, registry: new WatcherRegistry(), checkpointDelayMs: 20 });
    try {
      for (let i = 0; i < 12; i++) {
        await dropFile(inbox, `more-${i}.csv`, csv('id', [[10 + i]]));
        if (i % 4 === 3) await waitFor(() => handle.stats.filesIngested === i + 1 && handle.stats.checkpoints > 0, `file ${i}`);
      }
      await waitFor(() => handle.stats.filesIngested === 12, 'every file');
    } finally {
      await handle.stop();
      await db.close();
    }
    assert.deepEqual(await on('tableau', database, ids), [1, 2, ...Array.from({ length: 12 }, (_, i) => 10 + i)]);
  });

  it('a file of the old role hyperwatch is opened as that role, ingested into, and the user told once how to get a copy \
Tableau opens', async () => {
    const database = tmp.path('old.hyper');
    // Made as earlier hyperwatch releases made every file: its embedded hyperd ran as `hyperwatch`.
    const inbox = await tmp.dir('old');
    const old = createHyperAdapter({ database, user: LEGACY_ROLE });
    try {
      await dropFile(inbox, 'a.csv', csv('id', [[1]]));
      const h = await openWatcher(inbox, 't', { db: old, registry: new WatcherRegistry() });
      assert.equal((await h.stop()).stats.filesIngested, 1);
    } finally {
      await old.close();
    }
    assert.equal(fileRole(database), LEGACY_ROLE);

    const lines: string[] = [];
    const logger = lineLogger((line) => lines.push(line), { json: true, level: 'info' });
    await dropFile(inbox, 'b.csv', csv('id', [[2]]));
    await dropFile(inbox, 'c.csv', csv('id', [[3]]));
    const handle = await openWatcher(inbox, 't', { database, registry: new WatcherRegistry(), logger });
    await waitFor(() => handle.stats.filesIngested === 2, 'both files');
    assert.equal((await handle.stop()).stats.filesFailed, 0);
    const warnings = lines
      .map((l) => JSON.parse(l) as { level: string; message: string })
      .filter((l) => l.level === 'warn' && /belongs to the role/.test(l.message));
    assert.equal(warnings.length, 1, lines.join('\n'));
    assert.match(warnings[0]!.message, /"hyperwatch".*cannot open it.*hyperwatch export --database .*old\.hyper --table <table> --to/);
    assert.equal(fileRole(database), LEGACY_ROLE, 'the file keeps its role');
    assert.deepEqual(await on('legacy', database, ids), [1, 2, 3]);
  });

  it("a file made by Tableau's Hyper API is appended to as it is, and still opens there", async () => {
    const database = tmp.path('made-by-api.hyper');
    await on('tableau', '', (sql) => sql.unsafe(`CREATE DATABASE "${database}"`));
    await on('tableau', database, (sql) => sql.unsafe('CREATE TABLE t (id BIGINT)'));
    const inbox = await tmp.dir('api');
    await dropFile(inbox, 'a.csv', csv('id', [[1], [2]]));
    const handle = await openWatcher(inbox, 't', { database, registry: new WatcherRegistry() });
    await waitFor(() => handle.stats.filesIngested === 1, 'the file');
    await handle.stop();
    assert.deepEqual(await on('tableau', database, ids), [1, 2]);
  });

  it('a user that the file does not belong to is refused with the owner named and the fix', async () => {
    const database = tmp.path('wrong-user.hyper');
    await on('tableau', '', (sql) => sql.unsafe(`CREATE DATABASE "${database}"`));
    const inbox = await tmp.dir('wrong');
    await dropFile(inbox, 'a.csv', csv('id', [[1]]));
    const db = createHyperAdapter({ database, user: LEGACY_ROLE });
    try {
      await assert.rejects(openWatcher(inbox, 't', { db, registry: new WatcherRegistry() }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'DATABASE_ROLE');
        assert.match(error.message, /it is not "hyperwatch" but "tableau_internal_user".*createHyperAdapter\(\{ user: '<role>' \}\)/);
        return true;
      });
    } finally {
      await db.close();
    }
  });

  it('fileRole: no file, not a .hyper file, and a file of each role', async () => {
    assert.equal(fileRole(tmp.path('missing.hyper')), undefined);
    const text = tmp.path('not-hyper.hyper');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(text, '{"roles": [{"name": "x", "login": true, "superuser": false}]} not a catalog');
    assert.equal(fileRole(text), undefined, 'a role that is not a login superuser is no owner');
    for (const [server, role] of [
      ['tableau', TABLEAU_ROLE],
      ['legacy', LEGACY_ROLE],
    ] as const) {
      const database = tmp.path(`role-${role}.hyper`);
      await on(server, '', (sql) => sql.unsafe(`CREATE DATABASE "${database}"`));
      assert.equal(fileRole(database), role);
    }
  });
});
