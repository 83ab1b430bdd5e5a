/**
 * The text settings that mean something in JSON (NULL markers, the types given, dates in strings
 * read without a guess) on hyperd: the cases of helpers/json-dialect-suite.ts; on PostgreSQL:
 * json-dialect-postgres.test.ts.
 */
import { describe } from 'node:test';
import { hyperFixture } from '../../helpers/env.ts';
import { jsonDialectCases } from '../../helpers/json-dialect-suite.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

describe('JSON dialect settings on hyperd', () => {
  const t = useWatchBench(() => hyperFixture(), 'json_dialect_');
  jsonDialectCases(t);
});
