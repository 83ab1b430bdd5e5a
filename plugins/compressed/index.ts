/**
 * Compressed files: `X.csv.gz`, `X.jsonl.zst` and the like go to the plugin of `X.csv`, `X.jsonl`,
 * which reads them decompressed (plugins/shared/decoded-file.ts). The decompressed bytes always
 * stream from here to the database, also where hyperd could read the compressed file itself: hyperd loads the rows of a
 * truncated gzip file without an error, and would load a decompression bomb whole; and streaming
 * measured faster anyway (BENCHMARKS.md).
 */
import type { ClaimedFile, IngesterPlugin } from '../../src/types.ts';
import { type DecodedFile, openDecoded } from '../shared/decoded-file.ts';
import { decodingIngester } from '../shared/decoding-ingester.ts';
import { type Codec, CODEC_SUFFIX, CODECS, inflate } from './inflate.ts';

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

async function open(file: ClaimedFile, limit: number): Promise<DecodedFile> {
  const split = splitCodec(file.extension);
  if (!split) throw new Error(`${file.name}: ${file.extension} is not a compressed extension`);
  return openDecoded(file, split.inner, (bytes) => inflate(bytes, { codec: split.codec, name: file.name, size: file.size, limit }), limit);
}

/**
 * The plugin for `inner`'s extensions compressed with gzip (`.gz`) or zstd (`.zst`): each file is
 * decompressed as it streams into `inner`, which never knows the difference.
 * @example
 * const psvGz = compressedIngester(psv, { maxDecompressedBytes: 1024 ** 3 }); // .psv.gz, .psv.zst
 */
export function compressedIngester(inner: IngesterPlugin, options: CompressedOptions): IngesterPlugin {
  const limit = options.maxDecompressedBytes;
  return decodingIngester({
    name: `${inner.name}-compressed`,
    extensions: (options.extensions ?? inner.extensions).flatMap((ext) =>
      CODECS.map((codec) => `${ext.toLowerCase()}${CODEC_SUFFIX[codec]}`),
    ),
    inner,
    open: (file) => open(file, limit),
  });
}
