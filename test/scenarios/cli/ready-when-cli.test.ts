/** `hyperwatch watch --ready stable --include`, `--ready marker`, `--recursive`, run as a user would, against a real embedded hyperd. */
import assert from 'node:assert/strict';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { csv } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { cli } from '../../helpers/proc.ts';

describe('hyperwatch watch --ready stable', () => {
  const tmp = useTempDir('hyperwatch-ready-cli-');

  it('--once waits for the files present to stop changing, takes only --include ones, and exits', async () => {
    const inbox = await tmp.dir('stable');
    await writeFile(join(inbox, 'a.csv'), csv('id', [[1], [2]]));
    await writeFile(join(inbox, 'b.csv'), csv('id', [[3]]));
    await writeFile(join(inbox, 'notes.txt'), 'left alone\n');
    await writeFile(join(inbox, 'upload.csv.part'), 'id\n4\n');
    const db = tmp.path('stable.hyper');
    const started = Date.now();
    const args = ['watch', inbox, '--table', 't', '--database', db, '--ready', 'stable', '--stable-ms', '700'];
    const run = await cli([...args, '--include', '*.csv', '--include', '*.part', '--once', '--json', '--quiet']).done;
    assert.equal(run.code, 0, run.stderr);
    assert.ok(Date.now() - started >= 700, 'not before --stable-ms');
    const summary = JSON.parse(run.stdout);
    assert.equal(summary.stats.filesIngested, 2);
    assert.equal(summary.stats.filesFailed, 0);
    assert.equal(summary.stats.ignored, 1, 'notes.txt (upload.csv.part is in progress, not ignored)');
    assert.deepEqual((await readdir(inbox)).filter((n) => n !== '.hyperwatch' && n !== 'failed').sort(), ['notes.txt', 'upload.csv.part']);
    const query = await cli(['query', '--database', db, '--json', 'SELECT COUNT(*) AS n FROM t']).done;
    assert.deepEqual(JSON.parse(query.stdout), [{ n: '3' }]);
  });

  it('--ready marker --marker _DONE --once takes the folders holding _DONE whole; `history` names their files', async () => {
    const inbox = await tmp.dir('marker');
    await mkdir(join(inbox, 'job', 'date=2026-12-01'), { recursive: true });
    await writeFile(join(inbox, 'job', 'date=2026-12-01', 'a.csv'), csv('id', [[1], [2]]));
    await writeFile(join(inbox, 'job', 'b.csv'), csv('id', [[3]]));
    await writeFile(join(inbox, 'job', '_DONE'), '');
    await mkdir(join(inbox, 'waiting'));
    await writeFile(join(inbox, 'waiting', 'c.csv'), csv('id', [[4]]));
    const db = tmp.path('marker.hyper');
    const args = ['watch', inbox, '--table', 't', '--database', db, '--ready', 'marker', '--marker', '_DONE'];
    const run = await cli([...args, '--once', '--json', '--quiet']).done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).stats.filesIngested, 2);
    assert.deepEqual((await readdir(inbox)).filter((n) => n !== '.hyperwatch' && n !== 'failed').sort(), ['waiting']);
    const history = await cli(['history', '--database', db, '--json']).done;
    const rows = JSON.parse(history.stdout) as { file: string; claimId: string }[];
    assert.deepEqual(rows.map((r) => r.file).sort(), ['job/b.csv', 'job/date=2026-12-01/a.csv']);
    assert.equal(new Set(rows.map((r) => r.claimId)).size, 1, 'one claim for the folder');
  });

  it('--recursive --once takes the files of subfolders with their .ready, and `history` names them by their path', async () => {
    const inbox = await tmp.dir('recursive');
    await mkdir(join(inbox, 'a', 'b'), { recursive: true });
    await mkdir(join(inbox, 'c'));
    await writeFile(join(inbox, 'a', 'b', 'x.csv'), csv('id', [[1], [2]]));
    await writeFile(join(inbox, 'a', 'b', 'x.csv.ready'), '');
    await writeFile(join(inbox, 'c', 'x.csv'), csv('id', [[3]]));
    await writeFile(join(inbox, 'c', 'x.csv.ready'), '');
    const db = tmp.path('recursive.hyper');
    const run = await cli(['watch', inbox, '--table', 't', '--database', db, '--recursive', '--once', '--json', '--quiet']).done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).stats.filesIngested, 2);
    const history = await cli(['history', '--database', db, '--json']).done;
    assert.equal(history.code, 0, history.stderr);
    const names = (JSON.parse(history.stdout) as { file: string }[]).map((r) => r.file).sort();
    assert.deepEqual(names, ['a/b/x.csv', 'c/x.csv']);
  });

  it('refuses --stable-ms without --ready stable, --marker without --ready marker, marker with --recursive: usage errors', async () => {
    const inbox = await tmp.dir('usage');
    const db = tmp.path('usage.hyper');
    const alone = await cli(['watch', inbox, '--table', 't', '--database', db, '--stable-ms', '700', '--once']).done;
    assert.equal(alone.code, 2);
    assert.match(alone.stderr, /--stable-ms goes with --ready stable/);
    const marker = await cli(['watch', inbox, '--table', 't', '--database', db, '--marker', '_DONE', '--once']).done;
    assert.equal(marker.code, 2);
    assert.match(marker.stderr, /--marker goes with --ready marker/);
    const both = await cli(['watch', inbox, '--table', 't', '--database', db, '--ready', 'marker', '--recursive', '--once']).done;
    assert.equal(both.code, 2, both.stderr);
    assert.match(both.stderr, /readyWhen: 'marker' cannot go with recursive \(a marker folder is always read whole/);
  });
});
