/**
 * Text files in another character set (`encoding`): each file is decoded to UTF-8 as it streams
 * into the plugin of its format (csv, json), which never knows the difference (decode.ts says
 * which decoder and why). Compressed files are decompressed first, then decoded.
 */
import { IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile, IngesterPlugin } from '../../src/types.ts';
import { type DecodedFile, openDecoded } from '../shared/decoded-file.ts';
import { decodingIngester } from '../shared/decoding-ingester.ts';
import { isUtf16, toUtf8 } from './decode.ts';
import { notTextProblem, SNIFF_BYTES } from './not-text.ts';

/** UTF-8 takes at most 3 bytes for a character any of these character sets writes in 1 or 2 (4 for 4). */
const MAX_GROWTH = 3;

async function open(file: ClaimedFile, encoding: string): Promise<DecodedFile> {
  // A workbook or compressed file under a text name decodes, in a single-byte character set, to
  // a header of junk: refused by its first bytes instead.
  const problem = notTextProblem(file.name, await file.read(0, Math.min(SNIFF_BYTES, file.size)), isUtf16(encoding));
  if (problem) throw new IngestFailure(problem);
  return openDecoded(file, file.extension, (bytes) => toUtf8(bytes, encoding, file.name), MAX_GROWTH * file.size + MAX_GROWTH);
}

/**
 * `inner` for files in character set `encoding` (e.g. `windows-1252`): the same extensions (or
 * `extensions`), decoded to UTF-8 on the way in.
 * @example
 * const latin1Csv = encodedIngester(csvIngester, { encoding: 'windows-1252' });
 */
export function encodedIngester(
  inner: IngesterPlugin,
  options: { readonly encoding: string; readonly extensions?: readonly string[] },
): IngesterPlugin {
  return decodingIngester({
    name: `${inner.name}-${options.encoding}`,
    extensions: options.extensions ?? inner.extensions,
    inner,
    open: (file) => open(file, options.encoding),
  });
}
