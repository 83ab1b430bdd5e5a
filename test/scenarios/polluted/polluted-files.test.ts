/**
 * The polluted-files benchmark (bench/lib/polluted.ts) through real watchers on hyperd and on
 * PostgreSQL: for every pollution, the clean variant, one with a bad row and one with a bad column
 * (and that one gzip-compressed too), ready together, under the flags a user would type for the
 * pollution and `--on-bad-rows skip`. Each file lands exactly the clean file's rows; the bad one
 * of each bad variant is the only row in `failed/<name>.rejected.csv`, at its own line. The rows
 * carry a source column (the file's name), which is how each file's rows are told apart, and a
 * path of its own: a source column under another quote, and one with `--no-header` on hyperd, each
 * landed wrong before this suite (the name in double quotes; the first row dropped).
 */
import { describe, it } from 'node:test';
import { POLLUTIONS } from '../../../bench/lib/polluted.ts';
import { hyperFixture } from '../../helpers/env.ts';
import { pollutedCase } from '../../helpers/polluted-suite.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import { useWatchBench, type WatchBench } from '../../helpers/watch-bench.ts';

function pollutedCases(t: WatchBench): void {
  for (const p of POLLUTIONS) {
    it(`${p.name}${p.flags.length > 0 ? ` (${p.flags.join(' ')})` : ''}: every file lands the clean rows, the bad ones set aside`, () =>
      pollutedCase(t, p));
  }
}

describe('polluted files on hyperd', () => {
  const t = useWatchBench(() => hyperFixture(), 'polluted_');
  pollutedCases(t);
});

const { pgFixture } = await postgresForFile();

describe('polluted files on PostgreSQL', () => {
  const t = useWatchBench(pgFixture, 'polluted_pg_');
  pollutedCases(t);
});
