/**
 * postgres.js reads DATE, TIMESTAMP and TIMESTAMPTZ into JavaScript Dates: a DATE becomes the
 * instant of its midnight in UTC (printed `2018-01-28T00:00:00.000Z`), a TIMESTAMP is read in the
 * client's time zone, microseconds are cut to milliseconds and a BC date is an Invalid Date. For
 * a reader that shows values as the database has them (`hyperwatch query`), these types are kept
 * as the text the server sends: `2018-01-28`, `10:15:00`, `2018-01-28 10:15:00.123456`,
 * `2018-01-28 10:15:00+00`, `0044-03-15 BC`.
 */
import type postgres from 'postgres';

/** The type OIDs (the same on PostgreSQL and hyperd): date, time, timestamp, timestamptz, timetz. */
const TEMPORAL_OIDS = [1082, 1083, 1114, 1184, 1266];

/** postgres.js `types` that keep the temporal types as text; parameters are sent as before. */
export const DATES_AS_TEXT: Record<string, postgres.PostgresType<string | Date>> = {
  datesAsText: {
    to: 1184,
    from: TEMPORAL_OIDS,
    // postgres.js's own serializer for a Date parameter, unchanged.
    serialize: (x: string | Date) => (x instanceof Date ? x : new Date(x)).toISOString(),
    parse: (raw: string) => raw,
  },
};
