/**
 * The dialect `hyperwatch check` suggests: what the head of a `.csv` or `.tsv` file shows beyond
 * the settings given, as the flags to pass, by the sniffer `--sniff` applies at ingest.
 */
import { open } from 'node:fs/promises';
import { csvDialectOf, sniffCsv, sniffedFlags } from '../compose.ts';
import type { CsvOptions } from '../options.ts';

export interface SniffSuggestion {
  /** E.g. `['--csv-delimiter', ';', '--decimal-separator', ',']`; empty when the settings given say it all. */
  readonly flags: readonly string[];
  readonly undecided: readonly { readonly setting: string; readonly candidates: readonly string[]; readonly why: string }[];
}

/** How much of the head of a file is sniffed (as at ingest). */
const SNIFF_BYTES = 256 * 1024;

/** What the head of a plain `.csv` or `.tsv` file shows of its dialect, beyond `options`; undefined for other files. */
export async function suggestion(
  path: string,
  options: CsvOptions & { readonly encoding?: string; readonly csvDelimiter?: string },
): Promise<SniffSuggestion | undefined> {
  const extension = /\.(csv|tsv)$/i.exec(path)?.[0]?.toLowerCase();
  if (!extension || options.encoding !== undefined) return undefined;
  const handle = await open(path, 'r');
  try {
    const buffer = new Uint8Array(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
    const size = (await handle.stat()).size;
    const text = new TextDecoder('utf-8').decode(buffer.subarray(0, bytesRead));
    const { decided, undecided } = sniffCsv(text, extension, csvDialectOf(options), bytesRead >= size);
    return { flags: sniffedFlags(decided), undecided };
  } finally {
    await handle.close();
  }
}
