/**
 * `recursive: true`: files in subfolders, end to end on a real embedded hyperd and on a throwaway
 * PostgreSQL cluster (the cases: helpers/recursive-cases.ts).
 */
import { describe } from 'node:test';
import { hyperFixture } from '../../helpers/env.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import { recursiveCases } from '../../helpers/recursive-cases.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

const { pgFixture } = await postgresForFile();

describe('recursive, on a real hyperd', () => {
  recursiveCases(useWatchBench(hyperFixture, 'rc'));
});

describe('recursive, on a real PostgreSQL server', () => {
  recursiveCases(useWatchBench(pgFixture, 'rc'));
});
