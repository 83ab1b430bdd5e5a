/**
 * `sniff: true` at ingest: each file is read with the dialect its head decides (sniff.ts), the
 * settings the user gave kept as given; a file whose head reads more than one way fails, its
 * candidates listed, before anything loads. And the flags that say the same (`hyperwatch check`).
 */
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile } from '../../src/types.ts';
import { type CsvDialect, dialectProblems } from './dialect.ts';
import { type SniffedDialect, sniffCsv, type Undecided } from './sniff.ts';

/** How much of a file's head is sniffed. */
const SNIFF_BYTES = 256 * 1024;

const FLAG: Record<keyof SniffedDialect, string> = {
  delimiter: '--csv-delimiter',
  quote: '--quote',
  escape: '--escape',
  commentPrefix: '--comment',
  skipLines: '--skip-lines',
  header: '--no-header',
  dateStyle: '--date-style',
  decimalSeparator: '--decimal-separator',
  thousandsSeparator: '--thousands-separator',
  nullValues: '--null-value',
};

/** The flags that give the sniffed settings, e.g. `['--csv-delimiter', ';', '--null-value', '\\N']`. */
export function sniffedFlags(decided: SniffedDialect): string[] {
  const flags: string[] = [];
  for (const [key, value] of Object.entries(decided) as [keyof SniffedDialect, unknown][]) {
    if (key === 'header') {
      if (value === false) flags.push(FLAG.header);
    } else if (Array.isArray(value)) for (const v of value) flags.push(FLAG[key], String(v));
    else flags.push(FLAG[key], value === '\t' ? 'tab' : String(value));
  }
  return flags;
}

function described(u: Undecided): string {
  const flag = FLAG[u.setting];
  const options = u.setting === 'header' ? u.candidates.join(' or ') : u.candidates.map((c) => `${flag} ${c}`).join(' or ');
  return `${u.setting}: ${options} (${u.why})`;
}

/** The failure of a file whose head reads more than one way. */
export function undecidedFailure(file: ClaimedFile, undecided: readonly Undecided[]): IngestFailure {
  return new IngestFailure(
    ingestError(
      'data',
      'CSV_SNIFF_UNDECIDED',
      `${file.name}: sniff cannot tell how the file is written: ${undecided.map(described).join('; ')}`,
      'Say which with the setting (the flags above, or the same options in the API and the serve config), then replay the ' +
        'file; `hyperwatch check <file>` shows what each reading would land.',
      { file: file.name },
    ),
  );
}

/** The dialect `file` is read with under `sniff`: what its head decides, under the settings given. */
export async function sniffedDialect(file: ClaimedFile, given: CsvDialect): Promise<CsvDialect> {
  const bytes = await file.read(0, Math.min(SNIFF_BYTES, file.size));
  const text = new TextDecoder('utf-8').decode(bytes);
  const { decided, undecided } = sniffCsv(text, file.extension, given, bytes.length >= file.size);
  if (undecided.length > 0) throw undecidedFailure(file, undecided);
  const { sniff: _sniff, ...settings } = given;
  const read: CsvDialect = { ...decided, ...settings };
  // The settings given with the file's own: a decimal comma given, in a file the sniffer found comma-separated.
  const [clash] = dialectProblems(read);
  if (clash)
    throw new IngestFailure(
      ingestError(
        'data',
        'CSV_SNIFF_UNDECIDED',
        `${file.name}: read as sniffed, the settings clash: ${clash.field} ${clash.problem}`,
        'Give the delimiter of such files (--csv-delimiter), or drop the setting that clashes, then replay the file.',
        { file: file.name },
      ),
    );
  return read;
}
