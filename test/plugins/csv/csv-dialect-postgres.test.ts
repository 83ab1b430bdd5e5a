/** CSV dialects on PostgreSQL: the cases of helpers/csv-dialect-suite.ts and csv-syntax-suite.ts on a throwaway cluster. */
import { describe } from 'node:test';
import { csvNullCases, csvNumberCases } from '../../helpers/csv-dialect-suite.ts';
import { csvSyntaxCases } from '../../helpers/csv-syntax-suite.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

const { pgFixture } = await postgresForFile();

describe('CSV dialects on PostgreSQL', () => {
  const t = useWatchBench(pgFixture, 'dialect_pg_');
  csvNullCases(t);
  csvNumberCases(t);
  csvSyntaxCases(t);
});
