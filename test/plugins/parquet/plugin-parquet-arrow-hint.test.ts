/**
 * A Parquet footer whose `ARROW:schema` disagrees with its Parquet schema on how a column nests
 * (the class the fuzzer found: a list column the Arrow schema calls a struct), on a real hyperd,
 * on both paths: arrow-rs refuses such a file, and so does the ingester, naming the column; the
 * file as arrow-rs wrote it lands.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Field as ArrowField, Int32, List, Table, tableToIPC, vectorFromArray } from 'apache-arrow';
import { Message as FbMessage } from 'apache-arrow/fb/message';
import { Schema } from 'apache-arrow/fb/schema';
import { Type } from 'apache-arrow/fb/type';
import { ByteBuffer } from 'flatbuffers';
import { Table as WasmTable, readParquet, WriterPropertiesBuilder, writeParquet } from 'parquet-wasm';
import { count } from '../../helpers/env.ts';
import { context, LOCAL, REMOTE, useParquetBench } from '../../helpers/parquet-bench.ts';

/** A Parquet file arrow-rs writes from a table with an id and a list column (it keeps the Arrow schema). */
function arrowRsFile(): Uint8Array {
  const rows = Array.from({ length: 50 }, (_, i) => i);
  const table = new Table({
    id: vectorFromArray(rows, new Int32()),
    list: vectorFromArray(
      rows.map((i) => [i, i + 1]),
      new List(new ArrowField('item', new Int32(), true)),
    ),
  });
  return writeParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream')), new WriterPropertiesBuilder().build());
}

/**
 * The same file with the type of the Arrow schema's field `list` turned from List into Struct:
 * one byte of the schema message, base64 of the same length, so the footer keeps its size.
 */
function withListCalledStruct(file: Uint8Array): Buffer {
  const bytes = Buffer.from(file);
  const text = bytes.toString('latin1');
  const key = text.indexOf('ARROW:schema');
  assert.ok(key > 0, 'arrow-rs kept the Arrow schema');
  // The value follows the key: a Thrift binary (varint length, then base64 text).
  const start = text.slice(key).search(/[A-Za-z0-9+/]{40}/) + key;
  const end = start + /^[A-Za-z0-9+/=]+/.exec(text.slice(start))![0].length;
  const message = Buffer.from(text.slice(start, end), 'base64');
  const prefix = message.readInt32LE(0) === -1 ? 8 : 4;
  const body = message.subarray(prefix);
  const schema = FbMessage.getRootAsMessage(new ByteBuffer(body)).header(new Schema()) as Schema;
  const field = schema.fields(1)!;
  assert.equal(field.name(), 'list');
  assert.equal(field.typeType(), Type.List);
  // Field's type_type is its third slot (vtable offset 8).
  const bb = (field as unknown as { bb: ByteBuffer; bb_pos: number }).bb;
  const pos = (field as unknown as { bb_pos: number }).bb_pos;
  body[pos + bb.__offset(pos, 8)] = Type.Struct_;
  const encoded = message.toString('base64');
  assert.equal(encoded.length, end - start);
  bytes.write(encoded, start, 'latin1');
  return bytes;
}

describe('parquet footer: the Arrow schema against the Parquet schema', () => {
  const { fx, ingest, expectError } = useParquetBench();

  it('the file as arrow-rs wrote it lands; with its list column called a struct in ARROW:schema, arrow-rs and the \
ingester refuse it', async () => {
    await mkdir(join(fx.root, 'fixtures'), { recursive: true });
    const good = join(fx.root, 'fixtures', 'hint-good.parquet');
    const file = arrowRsFile();
    await writeFile(good, file);
    const landed = await ingest(good, 'hint_good');
    assert.ok(landed.isOk(), JSON.stringify(landed));
    assert.equal(await count(fx.pool, 'hint_good'), 50);

    const damaged = withListCalledStruct(file);
    assert.throws(() => readParquet(damaged), 'arrow-rs refuses the file');
    const bad = join(fx.root, 'fixtures', 'hint-bad.parquet');
    await writeFile(bad, damaged);
    for (const ctx of [context(LOCAL), context(REMOTE)]) {
      const error = expectError(await ingest(bad, 'hint_bad', ctx), 'data', 'PARQUET_CORRUPT');
      assert.match(
        error.message,
        /ARROW:schema .*disagrees with its Parquet schema: column "list" is a list in the Parquet schema and a struct/,
      );
    }
  });
});
