/**
 * Compressed files end to end, for any database (run by protocol-suite.ts, so on hyperd and
 * PostgreSQL, and under Deno and Bun): gzip made here with the web-standard CompressionStream,
 * zstd from fixtures (test/fixtures/compressed/, made with the zstd tool).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { startWatching, stopWatching } from '../../src/api.ts';
import { resolveOptions } from '../../src/options.ts';
import { HEAD_BYTES } from '../../plugins/shared/decoded-file.ts';
import { csvIngester } from '../../plugins/csv/index.ts';
import { defineIngester } from '../../src/plugins.ts';
import { csv, drop, failedEntries, leftovers, stagedEntries } from './drop.ts';
import { count } from './env.ts';
import { ROOT } from './proc.ts';
import { groupLogger, type WatchBench } from './watch-bench.ts';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'compressed');

export async function gzip(content: string | Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([content]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A CSV past the head the plugin reads ahead (so it streams during the COPY): `rows` rows. */
function bigCsv(rows: number, from = 0): string {
  const lines = ['id,name,amount'];
  for (let i = from; i < from + rows; i++) lines.push(`${i},name-${i}-${'x'.repeat(20)},${i}.5`);
  return `${lines.join('\n')}\n`;
}

async function report(dir: string, name: string): Promise<{ code: string; kind: string; message: string; hint: string; file: string }> {
  return JSON.parse(await readFile(join(dir, 'failed', `${name}.error`), 'utf8'));
}

export function compressionCases(t: WatchBench): void {
  it('compressed files: .csv.gz, .tsv.gz, .json.gz, .ndjson.gz, .csv.zst, .jsonl.zst load like their plain forms; the ledger \
names the file as dropped', async () => {
    const { dir, table, opts } = await t.inbox();
    // The first file makes the table (id, name, amount); the others fill some of its columns.
    await drop(
      dir,
      'a.csv.gz',
      await gzip(
        csv('id,name,amount', [
          [1, 'ann', 0.5],
          [2, 'bob', 1],
        ]),
      ),
    );
    const first = await startWatching(dir, table, opts);
    await stopWatching(dir, { registry: t.registry });
    await drop(dir, 'b.tsv.gz', await gzip('id\tname\n3\tcy\n'));
    await drop(dir, 'c.json.gz', await gzip('[{"id":4,"name":"dee"}]'));
    await drop(dir, 'd.ndjson.gz', await gzip('{"id":5,"name":"eve"}\n'));
    await drop(dir, 'orders.csv.zst', await readFile(join(FIXTURES, 'orders.csv.zst')));
    await drop(dir, 'events.jsonl.zst', await readFile(join(FIXTURES, 'events.jsonl.zst')));
    const stats = await startWatching(dir, table, opts);
    await stopWatching(dir, { registry: t.registry });
    assert.equal(stats.filesFailed, 0, JSON.stringify(stats.lastError));
    assert.equal(first.filesIngested + stats.filesIngested, 6);
    // orders.csv.zst: ids 1-3 (ann, bob, cy); events.jsonl.zst: ids 1-2 (ann, bob).
    assert.equal(await count(t.pool, table), 2 + 1 + 1 + 1 + 3 + 2);
    const names = await t.pool.query<{ name: string }>(`SELECT name FROM ${table} ORDER BY name`);
    assert.deepEqual(
      names.map((r) => r.name),
      ['ann', 'ann', 'ann', 'bob', 'bob', 'bob', 'cy', 'cy', 'dee', 'eve'],
    );
    const ledger = await t.pool.query<{ file_name: string }>(
      `SELECT file_name FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}' ORDER BY file_name`,
    );
    assert.deepEqual(
      ledger.map((r) => r.file_name),
      ['a.csv.gz', 'b.tsv.gz', 'c.json.gz', 'd.ndjson.gz', 'events.jsonl.zst', 'orders.csv.zst'],
    );
    assert.deepEqual(await leftovers(dir), []);
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('compressed files: a file larger than the read-ahead streams into the table; a truncated one and a corrupt one fail \
naming the byte offset, loading nothing', async () => {
    const { dir, table, opts } = await t.inbox();
    const rows = 20000;
    const text = bigCsv(rows);
    assert.ok(text.length > 2 * HEAD_BYTES, 'streams past the read-ahead');
    const packed = await gzip(text);
    await drop(dir, 'big.csv.gz', packed);
    const first = await startWatching(dir, table, opts);
    await stopWatching(dir, { registry: t.registry });
    assert.equal(first.filesIngested, 1, JSON.stringify(first.lastError));
    assert.equal(await count(t.pool, table), rows);

    const other = await gzip(bigCsv(rows, rows));
    const cut = other.subarray(0, Math.floor(other.length * 0.6));
    await drop(dir, 'cut.csv.gz', cut);
    const flipped = other.slice();
    flipped[Math.floor(flipped.length / 2)]! ^= 0xff;
    await drop(dir, 'flipped.csv.gz', flipped);
    const small = await gzip(csv('id,name,amount', [[7, 'x', 1]]));
    await drop(dir, 'smallcut.csv.gz', small.subarray(0, small.length - 6));
    // Only the CRC-32 in the trailer is wrong: the deflate data itself decodes.
    const badCrc = (await gzip(csv('id,name,amount', [[8, 'y', 1]]))).slice();
    badCrc[badCrc.length - 8]! ^= 0xff;
    await drop(dir, 'badcrc.csv.gz', badCrc);
    const second = await startWatching(dir, table, opts);
    await stopWatching(dir, { registry: t.registry });
    assert.equal(second.filesFailed, 4);
    assert.equal(await count(t.pool, table), rows, 'nothing of the bad files');
    assert.deepEqual(await failedEntries(dir), [
      'badcrc.csv.gz',
      'badcrc.csv.gz.error',
      'badcrc.csv.gz.ready',
      'cut.csv.gz',
      'cut.csv.gz.error',
      'cut.csv.gz.ready',
      'flipped.csv.gz',
      'flipped.csv.gz.error',
      'flipped.csv.gz.ready',
      'smallcut.csv.gz',
      'smallcut.csv.gz.error',
      'smallcut.csv.gz.ready',
    ]);
    const truncated = await report(dir, 'cut.csv.gz');
    assert.equal(truncated.kind, 'data');
    assert.match(truncated.code, /^COMPRESSED_(TRUNCATED|CORRUPT)$/);
    assert.match(
      truncated.message,
      new RegExp(
        `^cut\\.csv\\.gz: the gzip data (ends at byte ${cut.length} before its end of stream|is corrupt at or before ` +
          `byte ${cut.length} of ${cut.length}) .*nothing was loaded$`,
      ),
    );
    assert.match(truncated.hint, /replay/);
    const corrupt = await report(dir, 'flipped.csv.gz');
    assert.equal(corrupt.code, 'COMPRESSED_CORRUPT');
    const at = Number(/at or before byte (\d+) of (\d+)/.exec(corrupt.message)?.[1]);
    assert.ok(at >= flipped.length / 2 && at <= flipped.length, corrupt.message);
    assert.match(corrupt.message, new RegExp(`of ${flipped.length} \\(`));
    assert.equal((await report(dir, 'badcrc.csv.gz')).code, 'COMPRESSED_CORRUPT');
    const smallCut = await report(dir, 'smallcut.csv.gz');
    assert.match(smallCut.message, new RegExp(`byte ${small.length - 6}\\b`));
  });

  it('compressed files: a decompression bomb (100 KB of gzip, 9 KB of zstd, each inflating to 100 MB) fails past \
maxDecompressedBytes, loading nothing; the default limit is 4 GiB', async () => {
    assert.equal(resolveOptions({}).maxDecompressedBytes, 4 * 1024 ** 3);
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'seed.csv', 'n\n1\n');
    await drop(dir, 'bomb.csv.gz', await readFile(join(FIXTURES, 'bomb.csv.gz')));
    await drop(dir, 'bomb.csv.zst', await readFile(join(FIXTURES, 'bomb.csv.zst')));
    const limit = 8 * 1024 ** 2;
    const stats = await startWatching(dir, table, { ...opts, maxDecompressedBytes: limit });
    await stopWatching(dir, { registry: t.registry });
    assert.equal(stats.filesIngested, 1);
    assert.equal(stats.filesFailed, 2);
    assert.equal(await count(t.pool, table), 1, 'only seed.csv');
    for (const name of ['bomb.csv.gz', 'bomb.csv.zst']) {
      const r = await report(dir, name);
      assert.equal(r.code, 'DECOMPRESSED_TOO_LARGE');
      assert.equal(r.kind, 'data');
      assert.match(
        r.message,
        new RegExp(
          `^${name.replaceAll('.', '\\.')} inflates past maxDecompressedBytes \\(${limit} bytes\\) by byte \\d+ of its \\d+ ` +
            `compressed bytes; nothing was loaded$`,
        ),
      );
      assert.match(r.hint, /--max-decompressed-bytes/);
    }
  });

  it('compressed files: small ones ready together share transactions, a bad one among them fails alone; compression: false \
treats .gz as an unknown extension', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'seed.csv', csv('id,name', [[0, 'seed']]));
    await startWatching(dir, table, opts);
    await stopWatching(dir, { registry: t.registry });
    for (let i = 1; i <= 30; i++)
      await drop(
        dir,
        `f${i}.csv.gz`,
        await gzip(
          csv('id,name', [
            [i, `n${i}`],
            [i + 100, `m${i}`],
          ]),
        ),
      );
    const bad = await gzip(csv('id,name', [[999, 'bad']]));
    await drop(dir, 'bad.csv.gz', bad.subarray(0, bad.length - 4));
    const logger = groupLogger();
    const stats = await startWatching(dir, table, { ...opts, logger });
    await stopWatching(dir, { registry: t.registry });
    assert.ok(Math.max(...logger.groups) > 1, `committed in groups: ${logger.groups.join(' ')}`);
    assert.equal(stats.filesIngested, 30);
    assert.equal(stats.filesFailed, 1);
    assert.equal(await count(t.pool, table), 61);
    assert.equal(await count(t.pool, table, 'id = 999'), 0);
    assert.deepEqual(await failedEntries(dir), ['bad.csv.gz', 'bad.csv.gz.error', 'bad.csv.gz.ready']);

    await drop(dir, 'off.csv.gz', await gzip(csv('id,name', [[5000, 'off']])));
    const off = await startWatching(dir, table, { ...opts, compression: false });
    await stopWatching(dir, { registry: t.registry });
    assert.equal(off.filesFailed, 1);
    assert.equal((await report(dir, 'off.csv.gz')).code, 'UNKNOWN_EXTENSION');
  });

  it('compressed files: multi-member gzip (cat a.gz b.gz) loads on Node and Bun, fails as corrupt on Deno; a plugin of yours \
for .csv gets .csv.gz too', async () => {
    const { dir, table, opts } = await t.inbox();
    const both = new Uint8Array([...(await gzip('id,name\n1,a\n')), ...(await gzip('2,b\n'))]);
    await drop(dir, 'two.csv.gz', both);
    await drop(dir, 'one.csv.gz', await gzip('id,name\n3,c\n'));
    const seen: string[] = [];
    const mine = defineIngester({
      name: 'my-csv',
      extensions: ['.csv'],
      append(conn, file, target, ctx) {
        seen.push(`${file.name} as ${file.extension}`);
        return csvIngester.append(conn, file, target, ctx);
      },
    });
    const stats = await startWatching(dir, table, { ...opts, plugins: [mine] });
    await stopWatching(dir, { registry: t.registry });
    assert.ok(seen.includes('one.csv.gz as .csv'), seen.join(', '));
    if ('Deno' in globalThis) {
      assert.equal(stats.filesFailed, 1);
      assert.equal((await report(dir, 'two.csv.gz')).code, 'COMPRESSED_CORRUPT');
      assert.equal(await count(t.pool, table), 1);
    } else {
      assert.equal(stats.filesIngested, 2, JSON.stringify(stats.lastError));
      assert.ok(seen.includes('two.csv.gz as .csv'), seen.join(', '));
      assert.equal(await count(t.pool, table), 3);
    }
  });
}
