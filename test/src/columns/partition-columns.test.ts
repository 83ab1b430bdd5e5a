/**
 * `partitionColumns`: Hive-style `key=value` folders as columns, end to end on a real embedded
 * hyperd and on a throwaway PostgreSQL cluster (the cases: helpers/partition-cases.ts).
 */
import { describe } from 'node:test';
import { hyperFixture } from '../../helpers/env.ts';
import { partitionCases } from '../../helpers/partition-cases.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

const { pgFixture } = await postgresForFile();

describe('partition columns, on a real hyperd', () => {
  partitionCases(useWatchBench(hyperFixture, 'pc'));
});

describe('partition columns, on a real PostgreSQL server', () => {
  partitionCases(useWatchBench(pgFixture, 'pc'));
});
