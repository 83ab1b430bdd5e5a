/**
 * The load modes on a real embedded hyperd: replace, upsert and replace-keys file after file,
 * bad keys, `order: 'name'` (modes-suite.ts), what a second session reads during replaces, and
 * the staging tables (hyperd's keyed modes stage a file in a table of its own) a start cleans up.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openWatcher } from '../../../src/api.ts';
import { qualifiedName, quoteIdent, quoteLiteral } from '../../../src/columns/sql.ts';
import { LEDGER_TABLE, OWN_SCHEMA } from '../../../src/constants.ts';
import { csv, waitFor } from '../../helpers/drop.ts';
import { hyperFixture } from '../../helpers/env.ts';
import { dropAndWait } from '../../helpers/modes-common.ts';
import { modeCases } from '../../helpers/modes-suite.ts';
import { replaceReaderCase } from '../../helpers/modes-reader.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

describe('load modes on hyperd', () => {
  const t = useWatchBench(hyperFixture, 'm');
  modeCases(t, { ordered: false, grouped: false });
  replaceReaderCase(t, { files: 50, rows: 200_000 });

  const stages = async (): Promise<string[]> => {
    const rows = await t.pool.query<{ relname: string }>(
      `SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
        WHERE n.nspname = ${quoteLiteral(OWN_SCHEMA)} AND c.relname LIKE 'stage%'`,
    );
    return rows.map((r) => r.relname).sort();
  };

  it('a start drops a staging table left by a file that committed (its drop failed), not one of a claim that did not', async () => {
    const { dir, table, opts } = await t.inbox();
    const options = { ...opts, mode: 'upsert', key: 'id' } as const;
    const first = await openWatcher(dir, table, options);
    await dropAndWait(first, dir, 'a.csv', csv('id,name', [[1, 'a']]));
    assert.equal(first.stats.filesIngested, 1, JSON.stringify(first.stats.lastError));
    await first.stop();
    assert.deepEqual(await stages(), [], 'the attempt dropped its own');
    const [entry] = await t.pool.query<{ claim_id: string }>(
      `SELECT claim_id FROM ${qualifiedName(LEDGER_TABLE)} WHERE file_name = 'a.csv'`,
    );
    assert.ok(entry, 'a.csv is in the ledger');
    // As that attempt's table would be, had its DROP failed; and one of a claim never committed.
    const left = `stage_${entry.claim_id}_0badc0de`;
    const uncommitted = 'stage_0000000000-never-committed_0badc0de';
    for (const name of [left, uncommitted]) await t.pool.query(`CREATE TABLE ${OWN_SCHEMA}.${quoteIdent(name)} (id INT)`);
    assert.deepEqual(await stages(), [uncommitted, left].sort());
    const second = await openWatcher(dir, table, options);
    await waitFor(async () => !(await stages()).includes(left), "the committed claim's staging table to be dropped");
    assert.deepEqual(await stages(), [uncommitted], 'a claim that did not commit may still be in an attempt: its table stays');
    await dropAndWait(second, dir, 'b.csv', csv('id,name', [[1, 'b']]));
    assert.equal(second.stats.filesIngested, 1, JSON.stringify(second.stats.lastError));
    await second.stop();
  });
});
