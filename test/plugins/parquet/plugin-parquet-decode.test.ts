/**
 * The Parquet ingester's own decoding, the fallback when the database cannot read the file: the
 * CSV it spells values in, the bound on what it holds in memory, and the retry that falls back
 * to it when hyperd refuses a column type. No database (the connection is a stand-in).
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { encoderFor, formatDate, formatDecimal, formatTime, toJson } from '../../../plugins/parquet/csv.ts';
import { formatTimestamp, hexBytes, quoteCsv } from '../../../plugins/shared/csv-text.ts';
import { MAX_GROUP_BYTES, openGroup } from '../../../plugins/parquet/decode.ts';
import { parquetIngester } from '../../../plugins/parquet/index.ts';
import { mapParquetColumn } from '../../../plugins/parquet/types.ts';
import { isIngestFailure } from '../../../src/errors.ts';
import type { OpenedFile } from '../../../src/protocol/files.ts';
import type { DbConnection, Row, TableColumn } from '../../../src/types.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { miniParquet, plain } from '../../helpers/conformance-parquet-mini.ts';
import { claimInto, context, LOCAL } from '../../helpers/parquet-bench.ts';

describe('parquet CSV encoding (the fallback)', () => {
  it('formats dates and timestamps as ISO text, before 1970 and BC too', () => {
    assert.equal(formatDate(0), '1970-01-01');
    assert.equal(formatDate(19782), '2024-02-29');
    assert.equal(formatDate(-1), '1969-12-31');
    assert.equal(formatDate(-719162), '0001-01-01');
    assert.equal(formatDate(-719163), '0001-12-31 BC');
    assert.equal(formatTimestamp(1704164645123456n, false), '2024-01-02 03:04:05.123456');
    assert.equal(formatTimestamp(-1n, false), '1969-12-31 23:59:59.999999');
    assert.equal(formatTime(45296789, 'MILLIS'), '12:34:56.789000');
    assert.equal(formatTime(45296789012n, 'MICROS'), '12:34:56.789012');
    assert.equal(formatTime(45296789012345n, 'NANOS'), '12:34:56.789012');
  });

  it('formats decimals exactly from their unscaled integers', () => {
    assert.equal(formatDecimal(12345, 3), '12.345');
    assert.equal(formatDecimal(-5, 2), '-0.05');
    assert.equal(formatDecimal(123456789012345678n, 4), '12345678901234.5678');
    assert.equal(formatDecimal(Uint8Array.from([0xff]), 3), '-0.001');
    assert.equal(formatDecimal(Uint8Array.from([0x01, 0x00]), 0), '256');
    // 16 bytes: -1 with 38 digits of precision available
    assert.equal(formatDecimal(new Uint8Array(16).fill(0xff), 2), '-0.01');
  });

  it('quotes CSV fields that need it and spells bytes and JSON', () => {
    assert.equal(quoteCsv('plain'), 'plain');
    assert.equal(quoteCsv(''), '""');
    assert.equal(quoteCsv('a,b'), '"a,b"');
    assert.equal(quoteCsv('say "hi"'), '"say ""hi"""');
    assert.equal(quoteCsv('two\nlines\r'), '"two\nlines\r"');
    assert.equal(quoteCsv('\\.'), '"\\."');
    assert.equal(hexBytes(Uint8Array.from([0xde, 0xad, 0x00])), '\\xdead00');
    assert.equal(
      toJson({ a: [1n, 2.5, null], b: 'x"y', c: Uint8Array.from([1, 2]), d: true }),
      '{"a":[1,2.5,null],"b":"x\\"y","c":"AQI=","d":true}',
    );
    assert.equal(toJson(12345678901234567890n), '12345678901234567890');
  });

  it('spells unsigned 32-bit values modulo 2^32, whether read as INT32 or as INT64', () => {
    const encode = encoderFor({ kind: 'uint32' });
    assert.equal(encode(4294967295), '4294967295');
    assert.equal(encode(4294967295n), '4294967295');
    assert.equal(encode(-1n), '4294967295');
    assert.equal(encode(7), '7');
    assert.equal(encode(null), '');
  });
});

describe('parquet decoder bounds', () => {
  it('refuses to hold a row group of more than 1 GiB compressed, before reading any of it', async () => {
    const bytes = miniParquet([{ name: 'n', type: 1, data: plain.i32([1, 2, 3]) }], 3);
    const { parquetMetadata } = await import('hyparquet');
    const metadata = parquetMetadata(bytes);
    const chunk = metadata.row_groups[0]!.columns[0]!;
    const huge = {
      ...metadata,
      row_groups: [
        {
          ...metadata.row_groups[0]!,
          columns: [{ ...chunk, meta_data: { ...chunk.meta_data!, total_compressed_size: BigInt(MAX_GROUP_BYTES) + 1n } }],
        },
      ],
    };
    const reads: number[] = [];
    const source = { byteLength: 1 << 40, slice: (start: number) => (reads.push(start), Promise.resolve(new ArrayBuffer(0))) };
    const file = { name: 'huge.parquet' } as OpenedFile;
    const mapped = mapParquetColumn({ children: [], count: 1, element: metadata.schema[1]!, path: ['n'] });
    assert.ok(mapped.ok);
    await assert.rejects(openGroup({ file, source, metadata: huge, columns: [mapped.column] }, 0), (error: unknown) => {
      assert.ok(isIngestFailure(error));
      assert.equal(error.error.code, 'PARQUET_TOO_LARGE');
      assert.match(error.error.message, /huge\.parquet: row group 0 is 1073741825 bytes compressed, beyond the 1073741824 bytes/);
      return true;
    });
    assert.deepEqual(reads, [], 'nothing was read');
  });
});

describe('parquet ingester: retry when hyperd refuses a column type', () => {
  it('asks for a fresh transaction, and the retry decodes the file itself', async () => {
    const dir = await tempDir();
    const path = join(dir, 'ints.parquet');
    await writeFile(path, miniParquet([{ name: 'a', type: 1, data: plain.i32([1, 2, 3]) }], 3));
    const file = await claimInto(dir, path);
    const sqls: string[] = [];
    const conn: DbConnection = {
      query: <T extends Row = Row>() => Promise.resolve([] as T[]),
      execute: (sql) => {
        sqls.push(sql);
        return Promise.reject(
          Object.assign(new Error('There are columns in the Parquet file that have a data type that cannot be read by Hyper'), {
            code: '42804',
          }),
        );
      },
      copyFrom: async (sql, source) => {
        sqls.push(sql);
        let text = '';
        for await (const chunk of source) text += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk);
        assert.equal(text, '1\n2\n3\n');
        return 3;
      },
      describeTable: () => Promise.resolve<TableColumn[]>([{ name: 'a', sqlType: 'integer', nullable: true }]),
    };
    try {
      const ctx = context(LOCAL);
      const first = await parquetIngester.append(conn, file, { name: 't' }, ctx);
      assert.ok(first.isErr());
      assert.ok(first.error.retry, 'the error asks for a retry');
      assert.match(sqls[0]!, /external\(/);
      const second = await parquetIngester.append(conn, file, { name: 't' }, { ...ctx, attempt: 2 });
      assert.deepEqual(second._unsafeUnwrap(), { rows: 3 });
      assert.match(sqls[1]!, /COPY "public"."t" \("a"\) FROM STDIN WITH \(FORMAT csv\)/);
    } finally {
      await file.close();
      await removeDir(dir);
    }
  });
});
