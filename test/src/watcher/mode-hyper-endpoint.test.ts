/**
 * The load modes on a hyperd started by hand and reached with `endpoint` (files streamed to it, or
 * read by it: whatever its probe finds): the cases of modes-suite.ts and the reader during replaces.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe } from 'node:test';
import { createHyperAdapter } from '../../../adapters/db/hyper/index.ts';
import { dbFixture, removeDir, tempDir } from '../../helpers/env.ts';
import { modeCases } from '../../helpers/modes-suite.ts';
import { replaceReaderCase } from '../../helpers/modes-reader.ts';
import { startStandaloneHyperd } from '../../helpers/standalone-hyperd.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

const root = await tempDir('hyperwatch-modes-endpoint-');
const logDir = join(root, 'hyperd-log');
await mkdir(logDir);
const hyperd = await startStandaloneHyperd({ user: 'modes', logDir });
after(async () => {
  await hyperd.stop();
  await removeDir(root);
});

describe('load modes on a hyperd reached by endpoint', () => {
  const t = useWatchBench(
    async () =>
      dbFixture(
        await tempDir('hyperwatch-modes-ep-'),
        createHyperAdapter({ endpoint: `modes@127.0.0.1:${hyperd.port}`, database: join(root, 'modes.hyper') }),
        { ownsDb: true },
      ),
    'e',
  );
  modeCases(t, { ordered: false, grouped: false });
  replaceReaderCase(t, { files: 20, rows: 50_000 });
});
