/**
 * Files named as text (`.csv`, `.tsv`, `.json`, ...) that are not text: a workbook saved under
 * a `.csv` name, a compressed or Parquet file without its extension, UTF-16 without a byte order
 * mark. Read as text, their bytes become column names and values no file held (a table created
 * with a header of binary junk), or close hyperd's connection; told apart by their first bytes,
 * they fail at once, saying what the file looks like and what to do.
 */
import { ingestError } from '../../src/errors.ts';
import type { IngestError } from '../../src/types.ts';

/** What is read of a file's start to tell. */
export const SNIFF_BYTES = 64;

interface Kind {
  readonly magic: readonly number[];
  readonly looksLike: string;
  readonly fix: (name: string) => string;
}

const bytesOf = (text: string) => [...text].map((c) => c.charCodeAt(0));
const EXPORT = 'Save it from the spreadsheet as CSV (Excel: Save As, "CSV UTF-8") and drop that, then remove this one from failed/.';

/** Formats whose first bytes cannot start a text file (each holds a control or non-UTF-8 byte). */
const KINDS: readonly Kind[] = [
  {
    magic: [0x50, 0x4b, 0x03, 0x04],
    looksLike: 'a ZIP archive (an Excel .xlsx workbook, or a .zip)',
    fix: () => `${EXPORT} A .zip must be unpacked first.`,
  },
  { magic: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], looksLike: 'an old Excel .xls workbook', fix: () => EXPORT },
  {
    magic: [0x1f, 0x8b],
    looksLike: 'gzip-compressed data',
    fix: (name) => `Drop it again named with .gz at the end (e.g. ${name}.gz): compressed files are read by their extension.`,
  },
  {
    magic: [0x28, 0xb5, 0x2f, 0xfd],
    looksLike: 'zstd-compressed data',
    fix: (name) => `Drop it again named with .zst at the end (e.g. ${name}.zst): compressed files are read by their extension.`,
  },
  {
    magic: bytesOf('PAR1'),
    looksLike: 'a Parquet file',
    fix: (name) => `Drop it again named with the .parquet extension (e.g. ${name.replace(/\.[^.]*$/, '')}.parquet).`,
  },
  {
    magic: [...bytesOf('ARROW1'), 0, 0],
    looksLike: 'an Arrow IPC file',
    fix: (name) => `Drop it again named with the .arrow extension (e.g. ${name.replace(/\.[^.]*$/, '')}.arrow).`,
  },
];

function startsWith(head: Uint8Array, magic: readonly number[]): boolean {
  return head.length >= magic.length && magic.every((b, i) => head[i] === b);
}

/** `utf-16le` or `utf-16be` when the odd or the even bytes of `head` are all NUL (and the others none). */
function unmarkedUtf16(head: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  const pairs = Math.floor(head.length / 2);
  if (pairs < 2) return undefined;
  let evenNul = 0;
  let oddNul = 0;
  for (let i = 0; i < pairs * 2; i += 2) {
    if (head[i] === 0) evenNul++;
    if (head[i + 1] === 0) oddNul++;
  }
  if (oddNul === pairs && evenNul === 0) return 'utf-16le';
  if (evenNul === pairs && oddNul === 0) return 'utf-16be';
  return undefined;
}

function failure(name: string, code: string, message: string, hint: string): IngestError {
  return ingestError('data', code, `${name}: ${message}`, hint, { file: name });
}

/**
 * Why a file whose first bytes are `head` is not text a text plugin should read, or undefined.
 * `nulIsText`: the character set is UTF-16, where NUL bytes are every other byte of ASCII.
 * A NUL later in a file is left to the database (hyperd keeps it in the value, PostgreSQL refuses it).
 */
export function notTextProblem(name: string, head: Uint8Array, nulIsText: boolean): IngestError | undefined {
  const kind = nulIsText
    ? undefined
    : KINDS.find((k) => startsWith(head, k.magic) && (k.magic.some((b) => b < 0x20 || b > 0x7e) || head.includes(0)));
  if (kind) return failure(name, 'NOT_TEXT', `it is not text: it starts as ${kind.looksLike} does`, kind.fix(name));
  if (nulIsText) return undefined;
  const order = unmarkedUtf16(head);
  if (order) {
    return failure(
      name,
      'ENCODING_UTF16',
      'every other byte of its start is a NUL (0x00), as in UTF-16 text without a byte order mark; it is not UTF-8',
      `Set its character set (--encoding ${order}, or encoding: '${order}' in the API and the serve config) and replay the ` +
        `file, or save it as UTF-8 (UTF-16 with a byte order mark is read without a setting).`,
    );
  }
  const nul = head.indexOf(0);
  if (nul >= 0) {
    return failure(
      name,
      'NOT_TEXT',
      `it is not text: byte ${nul} is a NUL (0x00)`,
      'Check what wrote it: a .csv, .tsv or .json file must be text (UTF-8, UTF-16 with a byte order mark, or the character ' +
        'set --encoding names); binary data goes in a .parquet or .arrow file.',
    );
  }
  return undefined;
}
