/**
 * Exactly once for marker folders (`readyWhen: 'marker'`) when the embedded hyperd dies under the
 * watcher, as crash-hyperd.test.ts kills it for files: folders of several part files in flight
 * and others committed but not yet checkpointed at the kill. The watcher starts hyperd again with
 * its next connection; every folder lands once, whole, and is removed or archived.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createHyperAdapter } from '../../../adapters/db/hyper/index.ts';
import { openWatcher } from '../../../src/api.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import type { Logger } from '../../../src/types.ts';
import { csv, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { useHyperFixture } from '../../helpers/env.ts';
import { killHyperd } from '../../helpers/hyperd-kill.ts';
import { filesIn, sparkJob } from '../../helpers/marker-cases.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('crash safety: hyperd killed, marker folders', () => {
  const fx = useHyperFixture();

  /**
   * `readyWhen: 'marker'`: hyperd killed with folders of several part files in flight and others
   * committed but not yet checkpointed (so lost with hyperd, as its commits are durable only once
   * written out). A folder committed before the restart is checked again against the ledger as a
   * whole and loaded again whole when its commit is gone; one in flight is retried whole.
   */
  const markerVariants = [
    { label: '', name: 'marker', options: {} },
    { label: ' (onSuccess archive)', name: 'marker-archive', options: { onSuccess: 'archive' } },
  ] as const;
  for (const variant of markerVariants)
    it(`hyperd killed with folders in flight and commits not yet checkpointed: every folder once, whole${variant.label}`, async () => {
      const dir = join(fx.root, `hyperd-${variant.name}`);
      await mkdir(dir);
      const db = createHyperAdapter({ database: join(fx.root, `hyperd-${variant.name}.hyper`) });
      const registry = new WatcherRegistry();
      const said: { message: string; fields: Record<string, unknown> | undefined }[] = [];
      const keep = (message: string, fields?: Record<string, unknown>) => void said.push({ message, fields });
      const logger: Logger = { debug: keep, info: keep, warn: keep, error: keep };
      const options = {
        db,
        registry,
        readyWhen: 'marker',
        partitionColumns: true,
        sourceColumns: { file: '_file', claim: '_claim' },
        retryDelayMs: { initial: 20, max: 500 },
        // Commits wait 2 s for their checkpoint: a kill soon after some progress lands before it.
        checkpointDelayMs: 2000,
        ...variant.options,
      } as const;
      const handle = await openWatcher(dir, 'events', { ...options, logger });
      const jobs = 24;
      const parts = new Map<string, string[]>();
      let total = 0;
      const producer = (async () => {
        for (let j = 0; j < jobs; j++) {
          const job = `job-${String(j).padStart(2, '0')}`;
          if (j % 4 === 0) {
            // Spark-like: Parquet parts by DuckDB in Hive folders, a CSV part, _SUCCESS last.
            parts.set(job, await sparkJob(dir, job, total, 40, 3));
            total += 43;
          } else {
            // Four CSV parts of 5 rows in two partition folders (the keys of sparkJob's), written in place, the marker last.
            const files: string[] = [];
            for (let p = 0; p < 4; p++) {
              const rel = `date=2026-12-0${1 + (p % 2)}/region=eu/part-${p}.csv`;
              await mkdir(join(dir, job, rel, '..'), { recursive: true });
              await writeFile(
                join(dir, job, rel),
                csv(
                  'id,label',
                  Array.from({ length: 5 }, (_, i) => [total + i, `${job}-${p}`]),
                ),
              );
              files.push(rel);
              total += 5;
            }
            await writeFile(join(dir, job, '_SUCCESS'), '');
            parts.set(job, files.sort());
          }
          await sleep(60);
        }
      })();
      const dataFiles = () => [...parts.values()].reduce((a, f) => a + f.length, 0);
      try {
        for (let k = 0; k < 3; k++) {
          await waitFor(() => handle.stats.filesIngested >= (k + 1) * 15, 'progress before the kill', 60000);
          await killHyperd(db, handle);
        }
        // Once more after two of the folders lost with hyperd are loaded again (the third is being
        // loaded: recovery takes them one by one): their new commits are not checkpointed either,
        // and go back to the ledger check a second time.
        const reloads = () => said.filter((l) => l.message.startsWith('recovered: ingesting a folder whose commit was not durable')).length;
        await waitFor(() => reloads() >= 3, 'folders lost with hyperd to be loaded again', 60000);
        await killHyperd(db, handle);
        await producer;
        await waitFor(
          async () => (await leftovers(dir)).filter((n) => n !== 'archive').length === 0 && handle.stats.filesIngested === dataFiles(),
          'every folder to land',
          120000,
        ).catch(async (error: unknown) => {
          const last = said.slice(-12).map((l) => `${l.message} ${JSON.stringify(l.fields)}`);
          throw new Error(
            `${String(error)}: inbox ${(await leftovers(dir)).join(', ')}; staged ${(await stagedEntries(dir)).join(', ')}; ` +
              `${handle.stats.filesIngested} of ${dataFiles()} files ingested\n${last.join('\n')}`,
          );
        });
      } finally {
        await producer.catch(() => {});
        await handle.stop();
      }
      // A folder loaded again after a restart may still wait in staging for its checkpoint when
      // the watcher stops; the next start settles it. Exactly once is judged after that.
      const again = await openWatcher(dir, 'events', options);
      await again.stop();
      assert.deepEqual(await stagedEntries(dir), [], 'every folder settled');
      assert.deepEqual(await readdir(join(dir, 'failed')).catch(() => []), [], 'nothing failed');
      const restarts = said.filter((l) => l.message.startsWith('the database restarted before a checkpoint'));
      const reloaded = said.filter((l) => l.message.startsWith('recovered: ingesting a folder whose commit was not durable'));
      console.log(
        `# ${variant.name}: ${handle.stats.retries} retries; ${restarts.length} re-checks after a restart ` +
          `(${restarts.map((l) => l.fields?.files).join(', ')} folders); ${reloaded.length} folders loaded again`,
      );
      assert.ok(handle.stats.retries > 0, 'folders in flight at a kill were retried');
      assert.ok(restarts.length >= 2, 'kills came before the checkpoint of committed folders, and of folders loaded again');
      assert.ok(reloaded.length > 0, 'a folder whose commit died with hyperd was loaded again');
      if ('onSuccess' in variant.options) {
        const archived = await filesIn(join(dir, 'archive'));
        const expected = [...parts].flatMap(([job, files]) => [...files, '_SUCCESS'].map((f) => `${job}/${f}`));
        assert.deepEqual(
          archived.filter((f) => !f.endsWith('.crc') && !f.includes('/_committed_')),
          expected.sort(),
          'every folder archived once, whole',
        );
      } else assert.deepEqual(await leftovers(dir), [], 'every folder removed');
      const pool = await db.openPool({ maxConnections: 1 });
      try {
        const [row] = await pool.query<{ n: string; d: string }>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events');
        assert.equal(Number(row!.d), total, 'every id');
        assert.equal(Number(row!.n), total, 'no id twice');
        const byJob = await pool.query<{ job: string; claims: string }>(
          `SELECT split_part(_file, '/', 1) AS job, COUNT(DISTINCT _claim) AS claims FROM events GROUP BY 1 ORDER BY 1`,
        );
        assert.deepEqual(
          byJob.map((r) => [r.job, Number(r.claims)]),
          [...parts.keys()].sort().map((job) => [job, 1]),
          "each folder's rows from one claim: none half in",
        );
        const ledger = await pool.query<{ file_name: string; claim_id: string }>(
          'SELECT file_name, claim_id FROM hyperwatch_internal.ingest_log ORDER BY file_name',
        );
        assert.equal(ledger.length, dataFiles(), 'one ledger row per data file');
        for (const [job, files] of parts) {
          const rows = ledger.filter((l) => l.file_name.startsWith(`${job}/`));
          assert.deepEqual(
            rows.map((l) => l.file_name),
            files.map((f) => `${job}/${f}`),
            `${job}: one ledger row per data file`,
          );
          assert.equal(new Set(rows.map((l) => l.claim_id)).size, 1, `${job}: one commit`);
        }
      } finally {
        await pool.close();
        await db.close();
      }
    });
});
