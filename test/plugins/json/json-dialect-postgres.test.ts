/**
 * The text settings that mean something in JSON (NULL markers, the types given, dates in strings
 * read without a guess) on PostgreSQL: the cases of helpers/json-dialect-suite.ts on a throwaway
 * cluster; on hyperd: json-dialect.test.ts.
 */
import { describe } from 'node:test';
import { jsonDialectCases } from '../../helpers/json-dialect-suite.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

const { pgFixture } = await postgresForFile();

describe('JSON dialect settings on PostgreSQL', () => {
  const t = useWatchBench(pgFixture, 'json_dialect_pg_');
  jsonDialectCases(t);
});
