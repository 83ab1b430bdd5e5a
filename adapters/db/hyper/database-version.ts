/**
 * The file format version of a `.hyper` file: which Tableau releases open it, which column types
 * it can hold, and how to read it from hyperd.
 *
 * hyperd lists every database a session has attached in `pg_catalog.hyper_database`, with its
 * `database_version` (checked against files of each version 0–4 made with `CREATE DATABASE ...
 * WITH VERSION n`). A new file gets the version asked for, else the server's
 * `default_database_version` (2 on hyperd 0.7.3); an existing file keeps its own.
 */

/** The versions hyperd writes (1 is deprecated by the Hyper API in favour of 2, and still written). */
export const DATABASE_VERSIONS = [0, 1, 2, 3, 4] as const;
export type DatabaseVersion = (typeof DATABASE_VERSIONS)[number];

/** hyperd's `default_database_version`: the version of a new file when none is asked for. */
export const SERVER_DEFAULT_DATABASE_VERSION = 2;

/** The Tableau releases that open a file of each version (Hyper API documentation, HyperProcess settings). */
export const OPENED_BY: Readonly<Record<DatabaseVersion, string>> = {
  0: 'every Tableau release',
  1: 'Tableau Desktop/Server 2019.2.10, 2019.3.6, 2019.4.5, 2020.1.1 and later, Prep 2020.2 and later',
  2: 'Tableau Desktop/Server 2020.4.15, 2021.1.12, 2021.2.9, 2021.3.8, 2021.4.4, 2022.1.2 and later, Prep 2022.3 and later',
  3: 'Tableau Desktop 2022.4.1, Server 2023.1, Prep 2022.4.1 and later',
  4: 'Tableau Desktop/Server/Prep 2024.3 and later',
};

/** What is wrong with `value` as a database version; undefined when it is one. */
export function databaseVersionProblem(value: unknown): string | undefined {
  if ((DATABASE_VERSIONS as readonly unknown[]).includes(value)) return undefined;
  return `is ${JSON.stringify(value)}, not a Hyper database version (0, 1, 2, 3 or 4)`;
}

/** `--database-version` as typed: exactly one of the digits 0–4, else undefined. */
export function parseDatabaseVersion(text: string): DatabaseVersion | undefined {
  return /^[0-4]$/.test(text) ? (Number(text) as DatabaseVersion) : undefined;
}

/** The version of the database the session is connected to (as text: hyperd's column is TEXT). */
export const DATABASE_VERSION_QUERY = 'SELECT database_version FROM pg_catalog.hyper_database WHERE datname = current_database()';

/** The version in a row of `DATABASE_VERSION_QUERY`; undefined when hyperd did not say. */
export function versionOfRows(rows: readonly Record<string, unknown>[]): number | undefined {
  const value = Number(rows[0]?.database_version ?? Number.NaN);
  return Number.isInteger(value) && value >= 0 ? value : undefined;
}

/**
 * The lowest version that can hold a column of `sqlType` (as `format_type` spells it): 32-bit
 * floats came with version 4, numerics of more than 18 digits with version 3; hyperd refuses
 * such a column in an older file ("This database does not support 32-bit floating points").
 */
export function versionNeededBy(sqlType: string): number {
  const type = sqlType.trim().toLowerCase();
  if (type === 'real' || type === 'float4') return 4;
  const numeric = /^(?:numeric|decimal)\s*\(\s*(\d+)/.exec(type);
  if (numeric && Number(numeric[1]) > 18) return 3;
  return 0;
}
