/**
 * Opening a claimed file as Arrow IPC, in either layout, with memory bounded by one record batch.
 *
 * The file is first read as a list of messages, and every message's metadata is checked against
 * the schema's layout (messages.ts, layout.ts) before any body is read (open-format.ts):
 * - the stream format (`0xFFFFFFFF` continuation, or the pre-0.15 framing) is walked message by
 *   message. It is complete when it ends with the end-of-stream marker or at a message boundary
 *   (a writer may end a stream by closing it: Hyper's `COPY ... TO (FORMAT arrowstream)` does);
 *   a stream cut inside a message is truncated;
 * - the file format (`ARROW1` ... footer ... `ARROW1`) is read from its footer's blocks. apache-arrow's
 *   own reader would read a whole file-format input at once (it needs random access).
 *
 * Either way the result is one IPC stream of checked messages, decompressed and little-endian
 * (body.ts): Hyper's `FORMAT ARROWSTREAM` takes it as it is when nothing had to change, and
 * apache-arrow's stream reader decodes it one batch at a time.
 */
import { RecordBatchStreamWriter, type RecordBatch, type Schema } from 'apache-arrow';
import { IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile } from '../../src/types.ts';
import { checkMessages, safeMessages } from './messages.ts';
import { decode } from './batches.ts';
import { ChunkCollector } from './chunk-collector.ts';
import { FILE_HEAD, type OpenOptions, type Opened, openFileFormat, openStreamFormat, startsWithMagic } from './open-format.ts';
import { fail, guarded, readError, reported } from './read-errors.ts';

export type { OpenOptions } from './open-format.ts';

export interface IpcSource {
  readonly format: 'file' | 'stream';
  readonly schema: Schema;
  /**
   * `streamBytes()` is what Hyper reads as it is: little-endian, uncompressed, every message in
   * the current framing (Hyper: "Message does not begin with IPC continuation token") with V5
   * metadata. Otherwise the batches are decoded and re-encoded for Hyper.
   */
  readonly passThrough: boolean;
  /** Why not, for the log. */
  readonly notes: readonly string[];
  /** Rows of all record batches, as their (checked) metadata gives them. */
  readonly rows: number;
  /** NULLs of each top-level column over all record batches, as their metadata gives them. */
  readonly nulls: readonly number[];
  /** The input as one IPC stream of checked messages (schema, dictionaries, record batches, end-of-stream marker). */
  streamBytes(): AsyncIterable<Uint8Array>;
  /** Decoded record batches, one at a time. */
  batches(): AsyncIterable<RecordBatch>;
  /** Runs every check `streamBytes()` runs, reading of the bodies only what the checks look at (see `checkMessages`). */
  check(): Promise<void>;
}

/** The schema message alone, as the stream writer frames it (little-endian, V5). */
function schemaMessage(schema: Schema): Uint8Array {
  const sink = new ChunkCollector();
  new RecordBatchStreamWriter().reset(sink, schema);
  return sink.take();
}

function source(file: ClaimedFile, opened: Opened, valuesChecked: boolean): IpcSource {
  const { shape, blocks, notes, rows, nulls } = opened;
  const { transport, logical, expansions } =
    'transport' in opened.schema ? opened.schema : { transport: opened.schema, logical: opened.schema, expansions: [] };
  if (transport !== logical) notes.push('list-view or run-end encoded columns: expanded');
  const schema = logical;
  const header = schemaMessage(transport);
  const streamBytes = (): AsyncIterable<Uint8Array> => guarded(file, safeMessages(file, header, blocks, shape));
  const check = (): Promise<void> => (valuesChecked ? Promise.resolve() : reported(file, () => checkMessages(file, blocks, shape)));
  return {
    format: opened.format,
    schema,
    passThrough: notes.length === 0,
    notes,
    rows,
    nulls,
    streamBytes,
    batches: () =>
      decode(
        streamBytes,
        (error) => new IngestFailure(readError(file, error)),
        transport === logical ? undefined : { logical, expansions },
      ),
    check,
  };
}

/** Opens `file` as Arrow IPC; rejects with an `IngestFailure` (data or schema error) when it is not one this reader takes. */
export async function openIpc(file: ClaimedFile, options: OpenOptions = {}): Promise<IpcSource> {
  if (file.size === 0) {
    throw fail(
      'EMPTY_FILE',
      file,
      'is empty (0 bytes)',
      'An Arrow file holds at least its schema; write the file completely before creating its .ready, then replay it.',
    );
  }
  const head = await file.read(0, FILE_HEAD);
  const opened = await reported(file, () =>
    startsWithMagic(head) ? openFileFormat(file, options) : openStreamFormat(file, head, options),
  );
  return source(file, opened, options.checkValues === true);
}
