/**
 * Parsers hyparquet calls while decoding (decode.ts): dates and timestamps become the text we
 * send (full microsecond precision, where hyparquet's default `Date`s stop at milliseconds), and
 * JSON stays the producer's text instead of being parsed and printed again. Apart from csv.ts,
 * which streams what decode.ts decodes, so that the two import one way.
 */
import type { ParquetParsers } from 'hyparquet';
import { formatDate, formatTimestamp } from '../shared/csv-text.ts';

const utf8 = new TextDecoder('utf-8');

export const PARSERS: Partial<ParquetParsers> = {
  timestampFromMilliseconds: (millis: bigint | number) => formatTimestamp(BigInt(millis) * 1000n, false),
  timestampFromMicroseconds: (micros: bigint | number) => formatTimestamp(BigInt(micros), false),
  // Toward zero, as hyperd's own reader does, so both paths agree on pre-1970 nanoseconds.
  timestampFromNanoseconds: (nanos: bigint | number) => formatTimestamp(BigInt(nanos) / 1000n, false),
  dateFromDays: (days: number) => formatDate(days),
  jsonFromBytes: (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : utf8.decode(bytes)),
  // Well-known binary stays bytes (hyparquet would turn it into GeoJSON).
  geometryFromBytes: (bytes: Uint8Array) => bytes,
  geographyFromBytes: (bytes: Uint8Array) => bytes,
};
