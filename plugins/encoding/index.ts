/**
 * Text files in another character set (`encoding`): each file is decoded to UTF-8 as it streams
 * into the plugin of its format (csv, json), which never knows the difference (decode.ts says
 * which decoder and why). Compressed files are decompressed first, then decoded.
 */
import type { ClaimedFile, IngesterPlugin } from '../../src/types.ts';
import { type DecodedFile, openDecoded } from '../shared/decoded-file.ts';
import { decodingIngester } from '../shared/decoding-ingester.ts';
import { toUtf8 } from './decode.ts';

export { encodingProblem, isUtf8 } from './decode.ts';

/** UTF-8 takes at most 3 bytes for a character any of these character sets writes in 1 or 2 (4 for 4). */
const MAX_GROWTH = 3;

function open(file: ClaimedFile, encoding: string): Promise<DecodedFile> {
  return openDecoded(file, file.extension, (bytes) => toUtf8(bytes, encoding, file.name), MAX_GROWTH * file.size + MAX_GROWTH);
}

/**
 * `inner` for files in character set `encoding` (e.g. `windows-1252`): the same extensions (or
 * `extensions`), decoded to UTF-8 on the way in.
 * @example
 * const latin1Csv = encodedIngester(csvIngester, { encoding: 'windows-1252' });
 */
export function encodedIngester(inner: IngesterPlugin, options: { readonly encoding: string; readonly extensions?: readonly string[] }): IngesterPlugin {
  return decodingIngester({
    name: `${inner.name}-${options.encoding}`,
    extensions: options.extensions ?? inner.extensions,
    inner,
    open: (file) => open(file, options.encoding),
  });
}
