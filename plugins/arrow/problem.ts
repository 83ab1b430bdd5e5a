/**
 * What is wrong with an Arrow file, found while reading its bytes: thrown by the readers of the
 * IPC layout (which know neither the file's name nor how errors are reported) and turned into an
 * `IngestError` that names the file where the file is known (source.ts).
 */
export type ProblemCode =
  | 'ARROW_CORRUPT'
  | 'ARROW_NOT_IPC'
  | 'ARROW_TRUNCATED'
  | 'ARROW_UNSUPPORTED'
  | 'ARROW_UNSUPPORTED_TYPE'
  | 'ARROW_BATCH_TOO_LARGE'
  | 'ENCODING_INVALID';

export class IpcProblem extends Error {
  readonly code: ProblemCode;
  /** The top-level column the problem is in, when it is in one. */
  readonly column: string | undefined;

  constructor(code: ProblemCode, message: string, column?: string) {
    super(message);
    this.name = 'IpcProblem';
    this.code = code;
    this.column = column;
  }
}

export const corrupt = (message: string, column?: string): IpcProblem => new IpcProblem('ARROW_CORRUPT', message, column);

/** An int64 from the file as a JS number, or a corrupt-file problem when it is negative or past `max`. */
export function checkedSize(value: bigint, max: number, what: string, column?: string): number {
  if (value < 0n || value > BigInt(max)) throw corrupt(`${what} is ${value}, outside 0..${max}`, column);
  return Number(value);
}

/**
 * Gives timers and I/O a turn when the caller has held the event loop for a while: long decodes
 * call this between pieces of work so that no file stops the other files.
 */
export function makeBreather(sliceMs = 25): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
    since = performance.now();
  };
}
