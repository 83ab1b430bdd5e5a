/**
 * CSV dialects on hyperd, both ways a file reaches it: read by hyperd itself from the claimed path,
 * and streamed through `COPY ... FROM STDIN` (as from an endpoint that cannot read the watcher's
 * files), with the same files and the same values landing. The cases: helpers/csv-dialect-suite.ts
 * and csv-syntax-suite.ts; on PostgreSQL: csv-dialect-postgres.test.ts.
 */
import { describe } from 'node:test';
import { csvNullCases, csvNumberCases } from '../../helpers/csv-dialect-suite.ts';
import { csvSyntaxCases } from '../../helpers/csv-syntax-suite.ts';
import { hyperFixture } from '../../helpers/env.ts';
import { streamedHyperFixture } from '../../helpers/streamed-only.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

describe('CSV dialects on hyperd reading the files itself', () => {
  const t = useWatchBench(() => hyperFixture(), 'dialect_read_');
  csvNullCases(t);
  csvNumberCases(t);
  csvSyntaxCases(t);
});

describe('CSV dialects on hyperd with the files streamed', () => {
  const t = useWatchBench(streamedHyperFixture, 'dialect_stream_');
  csvNullCases(t);
  csvNumberCases(t);
  csvSyntaxCases(t);
});
