/**
 * `watch --log-level`, as a user runs it: debug adds the lines that say why something waits or
 * ran (here a checkpoint on the embedded hyperd), warn leaves only warnings and errors, and a
 * level that is not one, or given with --quiet, is a usage error.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dropFile } from '../../../src/producer/drop.ts';
import { csv } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { cli } from '../../helpers/proc.ts';

interface Line {
  readonly level: string;
  readonly message: string;
}

function lines(stderr: string): Line[] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

describe('watch --log-level', () => {
  const tmp = useTempDir('hyperwatch-log-level-');

  it('debug logs the checkpoint; warn leaves no info line; both land the file', async () => {
    const seen: Record<string, Line[]> = {};
    for (const level of ['debug', 'warn']) {
      const inbox = await tmp.dir(`in-${level}`);
      await dropFile(inbox, 'a.csv', csv('id', [[1], [2]]));
      const run = await cli([
        'watch',
        inbox,
        '--table',
        't',
        '--database',
        join(tmp.path(), `${level}.hyper`),
        '--once',
        '--json',
        '--log-format',
        'json',
        '--log-level',
        level,
      ]).done;
      assert.equal(run.code, 0, run.stderr);
      assert.equal(JSON.parse(run.stdout).stats.filesIngested, 1);
      seen[level] = lines(run.stderr);
    }
    assert.ok(
      seen.debug!.some((l) => l.level === 'debug' && l.message === 'checkpoint'),
      seen.debug!.map((l) => l.message).join(' | '),
    );
    assert.ok(seen.debug!.some((l) => l.level === 'info'));
    assert.deepEqual(
      seen.warn!.filter((l) => l.level === 'debug' || l.level === 'info'),
      [],
    );
  });

  it('a level that is not one, or one with --quiet, is a usage error (exit 2)', async () => {
    const inbox = await tmp.dir('bad');
    for (const [args, message] of [
      [['--log-level', 'loud'], /--log-level is debug, info, warn or error, not "loud"/],
      [['--log-level', 'debug', '--quiet'], /--quiet and --log-level: give one of them/],
    ] as const) {
      const run = await cli(['watch', inbox, '--table', 't', '--database', join(tmp.path(), 'bad.hyper'), ...args]).done;
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
    }
  });
});
