/**
 * Producers that cannot write `.ready`: `readyWhen: 'stable'` and `include` / `exclude`, end to
 * end on a real embedded hyperd and on a throwaway PostgreSQL cluster (the cases:
 * helpers/ready-when-cases.ts).
 */
import { describe } from 'node:test';
import { hyperFixture } from '../../helpers/env.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import { readyWhenCases } from '../../helpers/ready-when-cases.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

const { pgFixture } = await postgresForFile();

describe('producers without .ready, on a real hyperd', () => {
  readyWhenCases(useWatchBench(hyperFixture, 'rw'));
});

describe('producers without .ready, on a real PostgreSQL server', () => {
  readyWhenCases(useWatchBench(pgFixture, 'rw'));
});
