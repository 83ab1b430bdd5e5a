/**
 * The head of a JSON file, read once: its records decide a new table's columns and types, and
 * the keys it names are fitted to an existing table before the COPY starts.
 */
import type { JsonRecord, RecordPosition } from './record.ts';

/** How many leading records decide a new table's columns and types (whichever limit comes first). */
const SAMPLE_RECORDS = 1000;
const SAMPLE_CHARS = 256 * 1024;

export interface Sample {
  readonly records: JsonRecord[];
  /** Records read past the sample (the rest of its last batch). */
  rest: JsonRecord[];
  /** Every key of the sample, in order of first appearance. */
  readonly keys: string[];
  readonly firstSeen: Map<string, RecordPosition>;
}

export async function takeSample(batches: AsyncIterator<JsonRecord[]>): Promise<Sample> {
  const sample: Sample = { records: [], rest: [], keys: [], firstSeen: new Map() };
  let chars = 0;
  while (sample.records.length < SAMPLE_RECORDS && chars < SAMPLE_CHARS) {
    const next = await batches.next();
    if (next.done) break;
    const batch = next.value;
    let i = 0;
    for (; i < batch.length && sample.records.length < SAMPLE_RECORDS && chars < SAMPLE_CHARS; i++) {
      const record = batch[i]!;
      sample.records.push(record);
      chars += record.chars;
      for (const key of Object.keys(record.value)) {
        if (!sample.firstSeen.has(key)) {
          sample.firstSeen.set(key, record);
          sample.keys.push(key);
        }
      }
    }
    // The sample is full once a batch is only partly taken, so this happens at most once.
    if (i < batch.length) sample.rest = batch.slice(i);
  }
  return sample;
}
