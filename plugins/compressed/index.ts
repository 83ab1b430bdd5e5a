/**
 * Compressed files: `X.csv.gz`, `X.jsonl.zst` and the like go to the plugin of `X.csv`, `X.jsonl`,
 * which reads them decompressed (view.ts). The decompressed bytes always stream from here to the
 * database, also where hyperd could read the compressed file itself: hyperd loads the rows of a
 * truncated gzip file without an error, and would load a decompression bomb whole; and streaming
 * measured faster anyway (BENCHMARKS.md).
 */
import { ResultAsync } from 'neverthrow';
import { fromDbError, groupFailure, IngestFailure } from '../../src/errors.ts';
import { defineIngester } from '../../src/plugins.ts';
import type { AppendResult, ClaimedFile, DbConnection, IngestContext, IngesterPlugin, TableName } from '../../src/types.ts';
import { type Codec, CODEC_SUFFIX, CODECS } from './inflate.ts';
import { type DecompressedFile, openDecompressed } from './view.ts';

export { CODEC_SUFFIX, CODECS, type Codec } from './inflate.ts';

export interface CompressedOptions {
  /** A file that inflates past this many bytes fails (`maxDecompressedBytes`). */
  readonly maxDecompressedBytes: number;
  /** Which of `inner`'s extensions get compressed variants (default: all of them). */
  readonly extensions?: readonly string[];
}

/** `orders.csv.gz` → gzip and `.csv`; undefined for a name without a codec suffix. */
export function splitCodec(extension: string): { codec: Codec; inner: string } | undefined {
  const lower = extension.toLowerCase();
  for (const codec of CODECS) {
    const suffix = CODEC_SUFFIX[codec];
    if (lower.endsWith(suffix) && lower.length > suffix.length) return { codec, inner: lower.slice(0, -suffix.length) };
  }
  return undefined;
}

/** The plugin never hands the database a path: the compressed file on disk is not what it loads. */
function streaming(ctx: IngestContext): IngestContext {
  return { ...ctx, capabilities: { ...ctx.capabilities, readsLocalFiles: false } };
}

async function open(file: ClaimedFile, limit: number): Promise<DecompressedFile> {
  const split = splitCodec(file.extension);
  if (!split) throw new Error(`${file.name}: ${file.extension} is not a compressed extension`);
  return openDecompressed(file, split.inner, split.codec, limit);
}

async function appendMany(inner: IngesterPlugin, conn: DbConnection, files: readonly ClaimedFile[], table: TableName, ctx: IngestContext, limit: number): Promise<AppendResult[]> {
  const views: DecompressedFile[] = [];
  for (const [index, file] of files.entries()) {
    try {
      views.push(await open(file, limit));
    } catch (error) {
      throw new IngestFailure(fromDbError(error, file.name), index);
    }
  }
  // Files checked whole up front go to the inner plugin together (one COPY for the lot, when it
  // can); a larger one is streamed on its own, so a bad one fails alone.
  if (inner.appendMany && views.every((v) => v.complete)) {
    const many = await inner.appendMany(conn, views, table, ctx);
    if (many.isErr()) throw new IngestFailure(many.error.error, many.error.index);
    return [...many.value];
  }
  const results: AppendResult[] = [];
  for (const [index, view] of views.entries()) {
    const one = await inner.append(conn, view, table, ctx);
    if (one.isErr()) throw new IngestFailure(one.error, index);
    results.push(one.value);
  }
  return results;
}

/**
 * The plugin for `inner`'s extensions compressed with gzip (`.gz`) or zstd (`.zst`): each file is
 * decompressed as it streams into `inner`, which never knows the difference.
 * @example
 * const psvGz = compressedIngester(psv, { maxDecompressedBytes: 1024 ** 3 }); // .psv.gz, .psv.zst
 */
export function compressedIngester(inner: IngesterPlugin, options: CompressedOptions): IngesterPlugin {
  const limit = options.maxDecompressedBytes;
  return defineIngester({
    name: `${inner.name}-compressed`,
    extensions: (options.extensions ?? inner.extensions).flatMap((ext) => CODECS.map((codec) => `${ext.toLowerCase()}${CODEC_SUFFIX[codec]}`)),
    append(conn, file, table, ctx) {
      return ResultAsync.fromPromise(open(file, limit), (error) => fromDbError(error, file.name)).andThen((view) => inner.append(conn, view, table, streaming(ctx)));
    },
    appendMany(conn, files, table, ctx) {
      return ResultAsync.fromPromise(appendMany(inner, conn, files, table, streaming(ctx), limit), groupFailure);
    },
  });
}
