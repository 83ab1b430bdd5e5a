/**
 * The checks a CSV file's text passes before its rows may commit, in one read of the file beside
 * the database's own: UTF-8 (utf8-check.ts) and quotes readers disagree on (quote-check.ts); and,
 * when the database reads dates as written, that they are written as ISO (iso-date-check.ts).
 */
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile } from '../../src/types.ts';
import type { TextDialect } from './dialect.ts';
import type { IsoDateCheck } from './iso-date-check.ts';
import { type QuoteProblem, QuoteCheck } from './quote-check.ts';
import { checkUtf8, lineAt } from './utf8-check.ts';

const BOM = [0xef, 0xbb, 0xbf];

/**
 * Fails the file when its text is not UTF-8 or quotes a field in a way readers disagree on.
 * `dates`, when given, reads the same bytes (its `problem` tells the caller what it found).
 */
export async function checkText(file: ClaimedFile, text: TextDialect, whole?: Uint8Array, dates?: IsoDateCheck): Promise<void> {
  const quotes = new QuoteCheck(text);
  await checkUtf8(file, whole, (bytes, first) => {
    const start = first && BOM.every((b, i) => bytes[i] === b) ? BOM.length : 0;
    quotes.feed(bytes, start);
    dates?.feed(bytes, start);
    return quotes.problem === undefined && dates?.problem === undefined;
  });
  if (quotes.problem) throw await quoteFailure(file, quotes.problem, text, whole);
  dates?.end();
}

/** Bytes shown each side of a quote problem. */
const AROUND = 24;

async function quoteFailure(file: ClaimedFile, problem: QuoteProblem, text: TextDialect, whole?: Uint8Array): Promise<IngestFailure> {
  const line = await lineAt(file, problem.offset, whole);
  const from = Math.max(0, problem.offset - AROUND);
  const bytes = whole ? whole.subarray(from, problem.offset + AROUND) : await file.read(from, Math.min(2 * AROUND, file.size - from));
  // The line around the place, as text (a character cut at either end shows as U+FFFD).
  const shown = new TextDecoder().decode(bytes).split(/\r?\n/);
  const at = new TextDecoder().decode(bytes.subarray(0, problem.offset - from)).split('\n').length - 1;
  const context = `«${shown[at] ?? ''}»`;
  const q = text.quote;
  const inField = problem.kind === 'quote-in-unquoted-field';
  const message = inField
    ? `${file.name}: line ${line} (byte ${problem.offset + 1}) has a ${q} inside a field that does not begin with one, in ${context}: ` +
      `one reader takes it as text, the database as the start of a quoted section that runs on to the next ${q}, across lines`
    : `${file.name}: line ${line} (byte ${problem.offset + 1}) has text after the closing ${q} of a field, in ${context}: ` +
      `a quoted field ends with its closing ${q}, then a delimiter or the line's end; ` +
      'readers either join the text to the field or refuse the file';
  const hint = inField
    ? `Quote the field and double the ${q} inside it (12" pizza is written "12"" pizza"); or, if the file quotes no field, ` +
      `name a quote character it never uses (--quote, quote). Then replay the file.`
    : `Inside a quoted field a ${q} is written twice (${q}${q}); if the file escapes it with a backslash instead, say so ` +
      `(--escape '\\', escape). Fix the producer or the file, then replay it.`;
  return new IngestFailure(ingestError('data', 'CSV_QUOTE', message, hint, { file: file.name, line }));
}
