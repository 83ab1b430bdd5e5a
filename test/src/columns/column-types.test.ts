/**
 * columnTypes and allText on hyperd: the cases of helpers/column-types-suite.ts, with hyperd
 * reading the files itself and with every file streamed (as through an endpoint that cannot read
 * them).
 */
import { describe } from 'node:test';
import { columnTypeCases } from '../../helpers/column-types-suite.ts';
import { hyperFixture } from '../../helpers/env.ts';
import { streamedHyperFixture } from '../../helpers/streamed-only.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

describe('columnTypes and allText on hyperd reading the files itself', () => {
  const t = useWatchBench(() => hyperFixture(), 'coltypes_');
  columnTypeCases(t);
});

describe('columnTypes and allText on hyperd with the files streamed', () => {
  const t = useWatchBench(streamedHyperFixture, 'coltypes_stream_');
  columnTypeCases(t);
});
