/** columnTypes and allText on PostgreSQL: the cases of helpers/column-types-suite.ts on a throwaway cluster. */
import { describe } from 'node:test';
import { columnTypeCases } from '../../helpers/column-types-suite.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

const { pgFixture } = await postgresForFile();

describe('columnTypes and allText on PostgreSQL', () => {
  const t = useWatchBench(pgFixture, 'coltypes_pg_');
  columnTypeCases(t);
});
