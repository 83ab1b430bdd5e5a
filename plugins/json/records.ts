/**
 * Streaming record readers for JSON arrays and JSON lines. Neither holds more than one record (and
 * one read chunk) in memory: a JSON-lines file is split on newlines as it streams, and an array is
 * split into its top-level elements by a small tokenizer that only tracks strings, escapes and
 * bracket nesting; each record is then handed to `JSON.parse`, which does the real validation.
 */
import type { ClaimedFile, RejectedRow } from '../../src/types.ts';
import { ArraySplitter } from './array-splitter.ts';
import { LinesSplitter } from './lines-splitter.ts';
import { ACCEPTED_SHAPES, dataFailure, errorText, NEWLINE, type Splitter, WS } from './splitter.ts';
import type { JsonRecord } from './record.ts';

/**
 * The layout from the first non-whitespace character: `.json` is an array when it starts with `[`
 * and JSON lines when it starts with `{`; `.jsonl`/`.ndjson` are always JSON lines.
 */
function chooseSplitter(file: ClaimedFile, first: string, linesBefore: number, rejects?: RejectedRow[]): Splitter {
  const isJson = file.extension.toLowerCase() === '.json';
  if (!isJson) return new LinesSplitter(file.name, false, linesBefore, rejects);
  if (first === '[') return new ArraySplitter(file.name, linesBefore);
  if (first === '{') return new LinesSplitter(file.name, true, linesBefore, rejects);
  throw dataFailure(
    file.name,
    'JSON_SHAPE',
    `starts with ${JSON.stringify(first)} at line ${linesBefore + 1}: it is a single JSON value, not a list of records`,
    `${ACCEPTED_SHAPES} Write the records as an array of objects or as JSON lines, then replay the file.`,
    linesBefore + 1,
  );
}

/** Bytes of the file parsed into one batch of records. */
const BATCH_BYTES = 256 * 1024;

/**
 * The file's records in order, one batch per 256 KiB of the file: iterating an async generator costs a
 * promise per step, too much to pay per record of a large file. Throws `IngestFailure` (data
 * errors) on bad content; records before the fault have been yielded by then.
 */
export async function* readBatches(file: ClaimedFile, rejects?: RejectedRow[]): AsyncGenerator<JsonRecord[], void, undefined> {
  // fatal: a byte sequence that is not UTF-8 is a fault of the file, not something to paper over
  // with U+FFFD in the table. The decoder also drops a leading BOM.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let splitter: Splitter | undefined;
  let linesBefore = 0;
  let offset = 0;
  const decode = (chunk?: Uint8Array): string => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch (error) {
      throw dataFailure(
        file.name,
        'JSON_ENCODING',
        `is not valid UTF-8 (in ` +
          `the ${chunk ? `${chunk.length} bytes from byte offset ${offset}` : 'last bytes of the file'}): ${errorText(error)}`,
        'JSON files must be UTF-8; re-encode the file, then replay it.',
      );
    }
  };
  const feed = (text: string): JsonRecord[] => {
    const out: JsonRecord[] = [];
    if (!splitter) {
      const first = WS.exec(text);
      if (!first) {
        // Leading whitespace is dropped, but its line breaks still count for line numbers.
        for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === NEWLINE) linesBefore++;
        return out;
      }
      for (let i = 0; i < first.index; i++) if (text.charCodeAt(i) === NEWLINE) linesBefore++;
      splitter = chooseSplitter(file, first[0], linesBefore, rejects);
      text = text.slice(first.index);
    }
    splitter.push(text, out);
    return out;
  };
  for await (const chunk of file.stream()) {
    // Parsed records take several times the bytes they come from: a batch per quarter of a
    // read chunk keeps the records alive at once (and so the peak memory) small.
    for (let at = 0; at < chunk.length; at += BATCH_BYTES) {
      const part = chunk.subarray(at, at + BATCH_BYTES);
      const text = decode(part);
      offset += part.length;
      const batch = feed(text);
      if (batch.length > 0) yield batch;
    }
  }
  const last = feed(decode());
  if (!splitter) {
    throw dataFailure(
      file.name,
      'EMPTY_FILE',
      `holds only whitespace (${file.size} bytes)`,
      'Write the records before creating the .ready sentinel, then replay the file.',
    );
  }
  splitter.end(last);
  if (last.length > 0) yield last;
}
