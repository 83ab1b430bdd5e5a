/**
 * Damaged Parquet files on a real hyperd, on both paths where both apply: zero bytes, truncated,
 * not Parquet at all, a garbage footer, corrupt column data. Each is a data error naming the file.
 */
import assert from 'node:assert/strict';
import { copyFile, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { count } from '../../helpers/env.ts';
import { context, LOCAL, REMOTE, useParquetBench } from '../../helpers/parquet-bench.ts';

describe('parquet ingester', () => {
  const { fx, hyperParquet, ingest, expectError, manyTypesFile } = useParquetBench();
  let manyTypes: string;

  before(async () => {
    manyTypes = await manyTypesFile();
  });

  it('rejects a zero-byte file', async () => {
    const path = join(fx.root, 'fixtures', 'zero.parquet');
    await writeFile(path, '');
    const error = expectError(await ingest(path, 'zero'), 'data', 'EMPTY_FILE');
    assert.match(error.message, /zero\.parquet: the file is empty/);
  });

  it('rejects a truncated file on both paths', async () => {
    const path = join(fx.root, 'fixtures', 'truncated.parquet');
    await copyFile(manyTypes, path);
    const size = (await readFile(path)).length;
    await truncate(path, Math.floor(size / 2));
    for (const ctx of [context(LOCAL), context(REMOTE)]) {
      const error = expectError(await ingest(path, 'truncated', ctx), 'data', 'PARQUET_TRUNCATED');
      assert.match(error.message, /truncated\.parquet: the file is truncated/);
    }
    await truncate(path, 3);
    expectError(await ingest(path, 'truncated'), 'data', 'PARQUET_TRUNCATED');
  });

  it('rejects garbage that is not Parquet', async () => {
    const path = join(fx.root, 'fixtures', 'garbage.pq');
    await writeFile(path, Buffer.from('id,name\n1,not parquet at all\n'));
    const error = expectError(await ingest(path, 'garbage'), 'data', 'PARQUET_NOT_PARQUET');
    assert.match(error.message, /garbage\.pq: not a Parquet file/);
  });

  it('rejects a file whose footer is garbage', async () => {
    const good = await readFile(manyTypes);
    const bad = Buffer.from(good);
    const footerLength = bad.readUInt32LE(bad.length - 8);
    for (let i = bad.length - 8 - footerLength; i < bad.length - 8; i++) bad[i] = (i * 131) & 0xff;
    const path = join(fx.root, 'fixtures', 'bad-footer.parquet');
    await writeFile(path, bad);
    const error = expectError(await ingest(path, 'bad_footer'), 'data', 'PARQUET_CORRUPT');
    assert.match(error.message, /bad-footer\.parquet: the Parquet footer (cannot be read|is damaged: its Thrift encoding)/);
  });

  it('rejects corrupt column data with a data error on both paths', async () => {
    const path = await hyperParquet('pages.parquet', `SELECT g AS id, 'name' || g AS name FROM generate_series(1, 20000) g`);
    const bytes = await readFile(path);
    // Scramble the compressed bytes of the second column ("name"), keeping the footer intact.
    const { parquetMetadata } = await import('hyparquet');
    const meta = parquetMetadata(bytes).row_groups[0]!.columns[1]!.meta_data!;
    const start = Number(meta.data_page_offset) + 30;
    for (let i = start; i < start + 2000; i++) bytes[i] = (i * 31) & 0xff;
    const corrupt = join(fx.root, 'fixtures', 'corrupt-pages.parquet');
    await writeFile(corrupt, bytes);
    for (const ctx of [context(LOCAL), context(REMOTE)]) {
      const error = expectError(await ingest(corrupt, 'corrupt_pages', ctx), 'data', 'PARQUET_CORRUPT');
      assert.match(error.message, /corrupt-pages\.parquet/);
      assert.doesNotMatch(error.message, /staging/, 'names the file, not its staged path');
    }
    // Nothing landed. (hyperd does not roll back CREATE TABLE, so the table itself may remain.)
    assert.equal(await count(fx.pool, 'corrupt_pages'), 0);
  });
});
