/**
 * CSV files whose lines end with a carriage return alone, as old Mac spreadsheets save them
 * ("CSV (Macintosh)"). PostgreSQL's COPY reads them; hyperd's refuses them ("unexpected carriage
 * return character without line feed"). Such a file goes to the plugin as a view whose line ends
 * are line feeds; a carriage return inside a quoted field stays as written.
 */
import type { ClaimedFile } from '../../src/types.ts';
import { type DecodedFile, openDecoded } from '../shared/decoded-file.ts';

const CR = 0x0d;
const LF = 0x0a;
const QUOTE = 0x22;
/** Bytes looked at for the first line end: a header longer than this is read as it is. */
const LOOK = 64 * 1024;

/** The first line end outside quotes in `head` is a carriage return not followed by a line feed. */
export function endsLinesWithCr(head: Uint8Array): boolean {
  let quoted = false;
  for (let i = 0; i < head.length; i++) {
    const b = head[i]!;
    if (b === QUOTE) quoted = !quoted;
    else if (!quoted && b === LF) return false;
    else if (!quoted && b === CR) return i + 1 < head.length && head[i + 1] !== LF;
  }
  return false;
}

/** Every carriage return outside quotes that no line feed follows becomes a line feed. */
export async function* crToLf(bytes: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  let quoted = false;
  for await (const chunk of bytes) {
    const out = new Uint8Array(chunk);
    for (let i = 0; i < out.length; i++) {
      const b = out[i]!;
      if (b === QUOTE) quoted = !quoted;
      // A CR at the end of a chunk may begin a CRLF: only in a file of CR line ends, where
      // CRLF does not occur, so it is a line end either way.
      else if (b === CR && !quoted && out[i + 1] !== LF) out[i] = LF;
    }
    yield out;
  }
}

/** `file` as it is, or a view of it with line-feed line ends when its lines end with CR alone. */
export async function withLineFeeds(file: ClaimedFile): Promise<ClaimedFile | DecodedFile> {
  if (file.size === 0 || !endsLinesWithCr(await file.read(0, Math.min(LOOK, file.size)))) return file;
  return openDecoded(file, file.extension, crToLf, file.size);
}
