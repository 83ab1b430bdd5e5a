/**
 * The byte sink apache-arrow's writers write into, one batch at a time: both the Arrow source
 * (`source.ts`, the schema message) and the ingester (`index.ts`, batches re-encoded for Hyper)
 * take their output from it synchronously.
 */
import { AsyncByteQueue } from 'apache-arrow';
import { concatBytes } from '../../src/util/bytes.ts';

/**
 * An `AsyncByteQueue` the writer writes into that keeps what it is given for us to take
 * synchronously: the writer is driven one batch at a time, so there is never more than one batch
 * of output waiting (apache-arrow's own queue would buffer without bound).
 */
export class ChunkCollector extends AsyncByteQueue {
  #chunks: Uint8Array[] = [];
  #bytes = 0;

  override write(value: Parameters<AsyncByteQueue['write']>[0]): void {
    // The writer only ever passes Uint8Array views of its buffers (see `RecordBatchWriter._write`).
    if (!(value instanceof Uint8Array)) throw new TypeError('ChunkCollector takes Uint8Array chunks only');
    if (value.byteLength === 0) return;
    this.#chunks.push(value);
    this.#bytes += value.byteLength;
  }

  override close(): void {}

  get byteLength(): number {
    return this.#bytes;
  }

  /** Everything written since the last call, as one buffer (so COPY gets a few large writes). */
  take(): Uint8Array {
    const chunks = this.#chunks;
    this.#chunks = [];
    this.#bytes = 0;
    return chunks.length === 1 ? chunks[0]! : concatBytes(chunks);
  }
}
