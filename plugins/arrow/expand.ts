/**
 * A record batch decoded in transport form (encoded.ts) turned into its logical form: each list
 * view into a list (its rows' views gathered, in order, into one child), each run-end encoded
 * column into its values, one per row. The checks made before decoding (body.ts) keep every view
 * inside its child and every run end rising, so this only copies.
 */
import { BufferType, Data, type DataType, Field, LargeList, List, makeData, RecordBatch, type Schema, Struct } from 'apache-arrow';
import type { Expansion } from './encoded.ts';
import { take } from './gather.ts';
import { IpcProblem } from './problem.ts';

function expand(data: Data, expansion: Expansion, logical: DataType): Data {
  switch (expansion.kind) {
    case 'same':
      return data;
    case 'list-view': {
      const [offsets, sizes, values] = data.children as [Data, Data, Data];
      const child = expand(values, expansion.child, logical.children[0]!.type);
      const offsetAt = offsets.values as ArrayLike<number | bigint>;
      const sizeAt = sizes.values as ArrayLike<number | bigint>;
      const rows: number[] = [];
      const out = expansion.large ? new BigInt64Array(data.length + 1) : new Int32Array(data.length + 1);
      let total = 0;
      for (let i = 0; i < data.length; i++) {
        if (data.getValid(i)) {
          const start = Number(offsetAt[i]);
          const size = Number(sizeAt[i]);
          for (let j = 0; j < size; j++) rows.push(start + j);
          total += size;
          if (total > 0x7fffffff)
            throw new IpcProblem('ARROW_BATCH_TOO_LARGE', 'a list-view column expands to more than 2^31 values in one record batch');
        }
        out[i + 1] = (expansion.large ? BigInt(total) : total) as never;
      }
      const gathered = take(child, rows);
      const field = logical.children[0]!;
      const type = expansion.large
        ? new LargeList(new Field(field.name, gathered.type, field.nullable))
        : new List(new Field(field.name, gathered.type, field.nullable));
      const bits = data.nullCount > 0 && data.nullBitmap ? data.nullBitmap : new Uint8Array(0);
      return new Data(type, 0, data.length, data.nullCount, { [BufferType.OFFSET]: out, [BufferType.VALIDITY]: bits }, [gathered]);
    }
    case 'run-end': {
      const [runEnds, values] = data.children as [Data, Data];
      const ends = runEnds.values as ArrayLike<number | bigint>;
      const rows = new Int32Array(data.length);
      let run = 0;
      for (let i = 0; i < data.length; i++) {
        while (Number(ends[run]) <= i) run++;
        rows[i] = run;
      }
      return take(expand(values, expansion.values, logical), rows);
    }
    case 'nested': {
      const children = data.children.map((child, k) => expand(child, expansion.children[k]!, logical.children[k]!.type));
      return new Data(logical, data.offset, data.length, data.nullCount, data.buffers as never, children, data.dictionary);
    }
  }
}

/** A batch of the transport schema as a batch of `logical` (see encoded.ts), each column by its expansion. */
export function expandBatch(batch: RecordBatch, logical: Schema, expansions: readonly Expansion[]): RecordBatch {
  const children = batch.data.children.map((child, k) => expand(child, expansions[k]!, logical.fields[k]!.type));
  return new RecordBatch(logical, makeData({ type: new Struct(logical.fields), length: batch.numRows, nullCount: 0, children }));
}
