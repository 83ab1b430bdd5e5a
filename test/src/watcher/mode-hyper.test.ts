/**
 * The load modes on a real embedded hyperd: replace, upsert and replace-keys file after file,
 * bad keys, `order: 'name'` (modes-suite.ts), and what a second session reads during replaces.
 */
import { describe } from 'node:test';
import { hyperFixture } from '../../helpers/env.ts';
import { modeCases } from '../../helpers/modes-suite.ts';
import { replaceReaderCase } from '../../helpers/modes-reader.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

describe('load modes on hyperd', () => {
  const t = useWatchBench(hyperFixture, 'm');
  modeCases(t, { ordered: false, grouped: false });
  replaceReaderCase(t, { files: 50, rows: 200_000 });
});
