/**
 * A decoder's error in words about the file: hyparquet's own messages say what it found; a
 * JavaScript TypeError or RangeError from it only says that the bytes did not make sense.
 */
export function decoderMessage(error: unknown, what: string): string {
  if (error instanceof TypeError || error instanceof RangeError || !(error instanceof Error))
    return `${what} is malformed: its bytes do not decode`;
  return error.message;
}
