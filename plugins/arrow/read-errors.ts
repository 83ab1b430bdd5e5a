/**
 * What goes wrong reading an Arrow file, said as an `IngestError` that names the file and gives
 * the fix: one hint per `IpcProblem` code, and the wrappers that turn a problem thrown while
 * opening or streaming into an `IngestFailure`. Apart from `source.ts` so that the ingester
 * (`index.ts`) words its own reader errors the same way.
 */
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile, IngestError } from '../../src/types.ts';
import { IpcProblem } from './problem.ts';

export function fail(code: string, file: ClaimedFile, message: string, hint: string, cause?: unknown, column?: string): IngestFailure {
  const kind = code === 'ARROW_UNSUPPORTED_TYPE' ? 'schema' : 'data';
  return new IngestFailure(
    ingestError(kind, code, `${file.name}: ${message}`, hint, {
      file: file.name,
      ...(column === undefined ? {} : { column }),
      ...(cause === undefined ? {} : { cause }),
    }),
  );
}

const REWRITE_HINT =
  'The producer must write the file completely (close the Arrow writer) before creating its .ready; then replay the file.';
const NOT_ARROW_HINT =
  'Write Arrow IPC (file format, i.e. Feather v2, or stream format) with an Arrow library, or give the file the extension ' +
  'of its real format; then replay it.';
const CORRUPT_HINT =
  'The file is damaged or was written by a faulty writer: write it again with an Arrow library (pyarrow, arrow-rs, Arrow ' +
  'C++, apache-arrow), then replay it.';
const HINTS: Record<IpcProblem['code'], string> = {
  ARROW_CORRUPT: CORRUPT_HINT,
  ARROW_NOT_IPC: NOT_ARROW_HINT,
  ARROW_TRUNCATED: REWRITE_HINT,
  ARROW_UNSUPPORTED: 'Write the file without that feature (e.g. with pyarrow defaults), then replay it.',
  ARROW_UNSUPPORTED_TYPE:
    'Cast that column in the producer to a type this reader takes (e.g. a union to one of its types), or drop it; then replay the file.',
  ARROW_BATCH_TOO_LARGE: 'Write the file with smaller record batches (e.g. 64k rows each), then replay it.',
  ENCODING_INVALID: 'Write the file with its column names in UTF-8 (as the format requires), then replay it.',
};

/** Turns a reader error (a problem found here, or apache-arrow's) into an `IngestError` naming the file. */
export function readError(file: ClaimedFile, error: unknown): IngestError {
  if (error instanceof IngestFailure) return error.error;
  if (error instanceof IpcProblem) return fail(error.code, file, error.message, HINTS[error.code], error, error.column).error;
  const message = error instanceof Error ? error.message : String(error);
  return fail('ARROW_CORRUPT', file, `the Arrow data cannot be decoded (${message})`, CORRUPT_HINT, error).error;
}

/** Runs `open`, reporting problems as `IngestFailure`s that name the file. */
export async function reported<T>(file: ClaimedFile, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    throw new IngestFailure(readError(file, error));
  }
}

/** The same bytes, with problems found while reading them reported as `IngestFailure`s. */
export async function* guarded(file: ClaimedFile, bytes: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  try {
    yield* bytes;
  } catch (error) {
    throw new IngestFailure(readError(file, error));
  }
}
