/**
 * The option table, part four: how text files are read (compression, delimiter, character set).
 * How a CSV file is written beyond its delimiter (dates, NULL markers, quoting, header...) is in
 * csv-dialect.ts.
 */
import { csvDelimiterProblem, encodingProblem } from '../../compose.ts';
import { isBoolean, isNumber, shown, sizeFlag } from '../checks.ts';
import type { FlagText, OptionTable } from '../spec.ts';

/** Default `maxDecompressedBytes`: far beyond any real file, far below a full disk. */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 4 * 1024 ** 3;

export const TEXT_OPTIONS = {
  compression: {
    to: 'watcher',
    doc:
      'read `.gz` and `.zst` files of the text formats ([Formats](#formats)), decompressed as they stream; false treats them as ' +
      'unknown extensions',
    default: true,
    check: isBoolean('compression'),
    flag: {
      name: 'no-compression',
      type: 'boolean',
      help: 'treat .gz/.zst files as unknown extensions instead of decompressing',
      parse: () => ({ value: false }),
    },
    serve: { schema: { type: 'boolean' }, fix: 'Use true or false (no quotes).' },
  },
  maxDecompressedBytes: {
    to: 'watcher',
    doc: 'a compressed file inflating past this many bytes fails (`DECOMPRESSED_TOO_LARGE`: a decompression bomb)',
    default: DEFAULT_MAX_DECOMPRESSED_BYTES,
    defaultText: '4 GiB',
    check: isNumber('maxDecompressedBytes', 'a number of bytes'),
    flag: {
      name: 'max-decompressed-bytes',
      type: 'string',
      value: '<n>',
      help: 'a compressed file inflating past this fails (default 4G;\nsuffixes K, M, G, T: powers of 1024)',
      parse: sizeFlag('max-decompressed-bytes'),
    },
    serve: { schema: { type: 'integer' }, fix: 'Use a whole number of bytes, e.g. 4294967296 (4 GiB).' },
    range: { min: 1 },
  },
  csvDelimiter: {
    to: 'watcher',
    doc:
      "the field delimiter of `.csv` files, one character (e.g. `';'` for spreadsheets' exports where the decimal separator is a " +
      "comma, `'|'`, `'\\t'`); `.tsv` files are always tab-separated. Unset, a `.csv` whose header is one field that `;`, tab or `|` " +
      'split evenly fails as `CSV_DELIMITER`; see [Formats](#formats)',
    default: ',',
    check: (value: unknown) => {
      const problem = typeof value === 'string' ? csvDelimiterProblem(value) : `must be one ASCII character, got ${shown(value)}`;
      return problem === undefined ? undefined : `csvDelimiter ${problem}`;
    },
    flag: {
      name: 'csv-delimiter',
      type: 'string',
      value: '<char>',
      help:
        "the field delimiter of .csv files, e.g. ';' (spreadsheets' exports\nwhere the decimal separator is a comma), '|' or tab " +
        "(default ','; .tsv\nfiles are always tab-separated)",
      parse: (text: FlagText) => {
        // `tab` (or `\t` as typed) for a tab, which a shell makes awkward to type.
        const delimiter = text === 'tab' || text === '\\t' ? '\t' : String(text);
        const problem = csvDelimiterProblem(delimiter);
        return problem ? { problem: `--csv-delimiter ${problem} (for a tab: --csv-delimiter tab)` } : { value: delimiter };
      },
    },
    serve: {
      schema: { type: 'string', minLength: 1, maxLength: 1 },
      fix: 'Give one character, e.g. ";" or "\\t" for a tab.',
      checkFix: 'Give one character other than the quote, e.g. ";" or "\\t" for a tab.',
    },
  },
  encoding: {
    to: 'watcher',
    doc:
      "the character set of CSV, TSV and JSON files, e.g. `'windows-1252'` (what spreadsheets save as CSV in much of Europe and the " +
      "Americas), `'shift_jis'`, `'utf-16le'`; decoded to UTF-8 as they stream; see [Formats](#formats)",
    default: 'utf-8',
    defaultText: 'UTF-8',
    check: (value: unknown) => {
      const problem = typeof value === 'string' ? encodingProblem(value) : `${shown(value)} is not the name of a character set`;
      return problem === undefined ? undefined : `encoding: ${problem}`;
    },
    flag: {
      name: 'encoding',
      type: 'string',
      value: '<charset>',
      help:
        'the character set of CSV, TSV and JSON files, e.g. windows-1252 (what\nspreadsheets save as "CSV" in much of Europe and the ' +
        'Americas),\nshift_jis, utf-16le; decoded as they stream (default utf-8)',
      parse: (text: FlagText) => {
        const problem = encodingProblem(String(text));
        return problem ? { problem: `--encoding: ${problem}` } : { value: String(text) };
      },
    },
    serve: {
      schema: { type: 'string', minLength: 1 },
      fix: 'Name a character set, e.g. "windows-1252".',
      checkFix: 'Name the character set the files are in, e.g. "windows-1252" or "utf-16le".',
    },
  },
} as const satisfies Partial<OptionTable>;
