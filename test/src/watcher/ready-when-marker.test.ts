/**
 * `readyWhen: 'marker'`: folders of part files with a completion marker, end to end on a real
 * embedded hyperd and on a throwaway PostgreSQL cluster (the cases: helpers/marker-cases.ts).
 */
import { describe } from 'node:test';
import { hyperFixture } from '../../helpers/env.ts';
import { markerCases } from '../../helpers/marker-cases.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

const { pgFixture } = await postgresForFile();

describe('marker folders, on a real hyperd', () => {
  markerCases(useWatchBench(hyperFixture, 'mk'));
});

describe('marker folders, on a real PostgreSQL server', () => {
  markerCases(useWatchBench(pgFixture, 'mk'));
});
