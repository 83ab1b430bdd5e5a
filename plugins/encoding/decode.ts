/**
 * Text in another character set than UTF-8, decoded to UTF-8 as it streams. Spreadsheets save
 * "CSV" in the system's code page (Windows-1252 in much of Europe and the Americas, Shift_JIS in
 * Japan, ...) and "Unicode text" as UTF-16; databases read UTF-8.
 *
 * Which decoder, and why:
 * - UTF-16 (LE, BE, or by its byte order mark): the runtime's `TextDecoder` with `fatal`, which
 *   refuses a lone surrogate or an odd last byte; iconv-lite would pass a lone surrogate on (and
 *   it would reach the table as U+FFFD) and drop an odd last byte without a word.
 * - Every other character set: iconv-lite. The runtime's `TextDecoder` cannot be trusted with
 *   them: Node 20's decodes `windows-1252` as ISO-8859-1 (byte 0x80 became U+0080, not €), and
 *   Bun's supports few of them. iconv-lite puts U+FFFD where a byte or sequence means nothing in the
 *   character set; such a file is refused here, naming the byte, rather than loaded with a
 *   character it never held.
 */
import iconv from 'iconv-lite';
import { ingestError, IngestFailure } from '../../src/errors.ts';

interface Decoder {
  write(bytes: Uint8Array): string;
  end(): string;
  /** One byte per character: the n-th character of a chunk is its n-th byte. */
  readonly singleByte: boolean;
}

const EVERY_BYTE = Uint8Array.from({ length: 256 }, (_, i) => i);

type Utf16 = 'utf-16le' | 'utf-16be' | 'utf-16';

/** The name a user gives, as iconv-lite knows it (`Latin1` → `latin1`, `CP1252` → `cp1252`). */
function canonical(label: string): string {
  return label
    .trim()
    .toLowerCase()
    .replace(/[^0-9a-z]/g, '');
}

function utf16Of(label: string): Utf16 | undefined {
  const name = canonical(label);
  if (name === 'utf16le' || name === 'ucs2') return 'utf-16le';
  if (name === 'utf16be') return 'utf-16be';
  if (name === 'utf16') return 'utf-16';
  return undefined;
}

/** UTF-16 under any of its names (NUL bytes are then text). */
export function isUtf16(label: string): boolean {
  return utf16Of(label) !== undefined;
}

/** UTF-8 under any of its names: nothing to decode. */
export function isUtf8(label: string): boolean {
  const name = canonical(label);
  return name === 'utf8' || name === 'unicode11utf8';
}

/** Why `label` is not a character set hyperwatch can read, or undefined when it is. */
export function encodingProblem(label: string): string | undefined {
  if (isUtf8(label) || utf16Of(label) || iconv.encodingExists(label)) return undefined;
  return `${JSON.stringify(label)} is not a known character set (e.g. windows-1252, latin1, iso-8859-15, shift_jis, gb18030, utf-16le)`;
}

function utf16Decoder(kind: Utf16, first: Uint8Array): Decoder {
  // Without a byte order mark, "UTF-16" is little-endian, as Windows writes it.
  const label = kind !== 'utf-16' ? kind : first[0] === 0xfe && first[1] === 0xff ? 'utf-16be' : 'utf-16le';
  const decoder = new TextDecoder(label, { fatal: true });
  return { write: (bytes) => decoder.decode(bytes, { stream: true }), end: () => decoder.decode(), singleByte: false };
}

function iconvDecoder(label: string): Decoder {
  const decoder = iconv.getDecoder(label as iconv.Encoding, { stripBOM: true });
  // iconv-lite's types say Buffer; its decoders index bytes and need no more than a Uint8Array.
  const singleByte = iconv.decode(EVERY_BYTE as Buffer, label as iconv.Encoding, { stripBOM: false }).length === EVERY_BYTE.length;
  return { write: (bytes) => decoder.write(bytes as Buffer), end: () => decoder.end() ?? '', singleByte };
}

function invalid(name: string, label: string, at: string): IngestFailure {
  return new IngestFailure(
    ingestError(
      'data',
      'ENCODING_INVALID',
      `${name}: ${at} is not valid ${label}`,
      `Check which character set the file is in and set it (--encoding, or encoding in the API and the serve config); a ` +
        `file that mixes character sets must be converted to one (e.g. iconv -f ${label} -t UTF-8), then replayed.`,
      {
        file: name,
      },
    ),
  );
}

/**
 * `bytes` in character set `label`, as UTF-8. Fails with `ENCODING_INVALID` on bytes that mean
 * nothing in it, naming where. A leading byte order mark is dropped.
 */
export async function* toUtf8(bytes: AsyncIterable<Uint8Array>, label: string, name: string): AsyncIterable<Uint8Array> {
  const encoder = new TextEncoder();
  const utf16 = utf16Of(label);
  let decoder: Decoder | undefined;
  let at = 0;
  for await (const chunk of bytes) {
    decoder ??= utf16 ? utf16Decoder(utf16, chunk) : iconvDecoder(label);
    let text: string;
    try {
      text = decoder.write(chunk);
    } catch {
      throw invalid(name, label, `a character in bytes ${at}-${at + chunk.length - 1}`);
    }
    const bad = utf16 ? -1 : text.indexOf('\ufffd');
    if (bad >= 0)
      throw invalid(
        name,
        label,
        decoder.singleByte
          ? `byte ${at + bad} (0x${chunk[bad]!.toString(16).padStart(2, '0')})`
          : `a byte in bytes ${at}-${at + chunk.length - 1}`,
      );
    at += chunk.length;
    if (text.length > 0) yield encoder.encode(text);
  }
  let rest: string;
  try {
    rest = decoder?.end() ?? '';
  } catch {
    throw invalid(name, label, `the end of the file (a character cut short at byte ${at})`);
  }
  if (!utf16 && rest.includes('\ufffd')) throw invalid(name, label, `the end of the file (a character cut short at byte ${at})`);
  if (rest.length > 0) yield encoder.encode(rest);
}
