/**
 * Several small CSV files of the same header appended with one COPY, each file's row count taken
 * from its own scan; the files that cannot share one go one by one.
 */
import { fromDbError, ingestError, IngestFailure, isIngestFailure } from '../../src/errors.ts';
import { mapLimit } from '../../src/util/map-limit.ts';
import { checkHeaderNames, columnList } from '../../src/columns/schema.ts';
import { hasSourceColumns } from '../../src/columns/source-columns.ts';
import { qualifiedName, quoteLiteral } from '../../src/columns/sql.ts';
import { fitTable } from '../../src/columns/table-fit.ts';
import type { AppendResult, ClaimedFile, DbConnection, IngestContext, TableColumn, TableName } from '../../src/types.ts';
import { append, nameColumn } from './append.ts';
import { conversionFailure, likelyCulprit } from './culprit.ts';
import { baseDateRules, dateKind } from './dates.ts';
import {
  type CsvDialect,
  dateSettings,
  delimiterByte,
  delimiterOf,
  mayBeOtherDelimited,
  nullMarkers,
  numberFormat,
  plainText,
  textDialect,
} from './dialect.ts';
import { copyOptions, plain, type ReadPlan, splicing } from './read-plan.ts';
import { spliced } from './splice.ts';
import { addedTypes, parseRows } from './head.ts';
import { LF, type Scan, scanCsv } from './scan.ts';
import { isUtf8 } from './utf8-check.ts';

/**
 * The bodies of `files` (headers dropped), one after the other, each ending in a line break;
 * with `plan`, each with the fields that change replaced (a failure there names its file).
 */
async function* bodies(
  files: readonly ClaimedFile[],
  scans: readonly Scan[],
  plan?: ReadPlan,
  indexes?: readonly number[],
): AsyncIterable<Uint8Array> {
  for (const [i, file] of files.entries()) {
    const scan = scans[i]!;
    if (scan.bodyStart < file.size) {
      const body = file.stream({ start: scan.bodyStart });
      if (!plan) yield* body;
      else {
        try {
          yield* spliced(body, splicing(file, plan, false, 2));
        } catch (error) {
          throw new IngestFailure(fromDbError(error, file.name), indexes?.[i]);
        }
      }
    }
    if (scan.records > 0 && !scan.endsWithNewline) yield new Uint8Array([LF]);
  }
}

/**
 * The fields of a file (by position) that fill date columns of the table (`dates`, its columns
 * that hold dates): found by the header (the first record of the file's head), named as the
 * table names them, or case-insensitively.
 */
function dateFields(bytes: Uint8Array, delimiter: string, table: readonly TableColumn[], dates: readonly TableColumn[]): Set<number> {
  if (dates.length === 0) return new Set();
  const header = headerFields(bytes, delimiter);
  const fills = (name: string) =>
    dates.some((c) => c.name === name) ||
    (!table.some((c) => c.name === name) &&
      table.filter((c) => c.name.toLowerCase() === name.toLowerCase()).length === 1 &&
      dates.some((c) => c.name.toLowerCase() === name.toLowerCase()));
  return new Set(header.flatMap((name, i) => (fills(name.replace(/^\uFEFF/, '')) ? [i] : [])));
}

const QUOTE = 0x22;
const decoder = new TextDecoder();

/**
 * The header's fields. A header line without a quote is its fields split at the delimiter (what
 * the CSV parser makes of it, for a fraction of its cost on each of a thousand small files).
 */
function headerFields(bytes: Uint8Array, delimiter: string): string[] {
  const end = bytes.indexOf(LF);
  const line = bytes.subarray(0, end === -1 ? Math.min(bytes.length, 64 << 10) : end);
  if (end !== -1 && !line.includes(QUOTE)) return decoder.decode(line).replace(/\r$/, '').split(delimiter);
  return parseRows(decoder.decode(bytes.subarray(0, Math.min(bytes.length, 64 << 10))), delimiter, 1)[0] ?? [];
}

/** Total size of a failed group up to which its bad value's file is guessed (see culpritOf). */
const GUESS_MAX_BYTES = 8 << 20;

/**
 * The member a failed shared COPY's error belongs to: the one its detail names by path (errors in
 * a file's structure), else the likely holder of a value that did not convert (see culprit.ts).
 */
async function culpritOf(error: unknown, members: readonly ClaimedFile[], delimiter: string): Promise<number | undefined> {
  const detail = (error as { detail?: unknown } | null)?.detail;
  if (typeof detail !== 'string') return undefined;
  const path = /file:\s*'([^']*)'/.exec(detail)?.[1];
  const named = members.findIndex((f) => f.stagedPath === path);
  if (named >= 0) return named;
  const failure = conversionFailure(error instanceof Error ? error.message : '', detail);
  // A group's members are small (most are in memory since their claim); past a few MiB in all,
  // the guess is not worth reading them again.
  if (!failure || members.reduce((sum, f) => sum + f.size, 0) > GUESS_MAX_BYTES) return undefined;
  const contents = await Promise.all(members.map((f) => f.read(0, f.size)));
  return likelyCulprit(failure, contents, delimiter);
}

/**
 * Appends small files of the same header with one COPY for all of them: the server reads them
 * itself (`COPY ... FROM ARRAY[...]`) when it can, else their bodies go through one `COPY FROM
 * STDIN`. Each file's row count is its record count, checked against the server's total. Files
 * that cannot share a COPY (their own header, an irregular file, a new table) go one by one.
 */
export async function appendMany(
  conn: DbConnection,
  files: readonly ClaimedFile[],
  table: TableName,
  ctx: IngestContext,
  dialect: CsvDialect,
): Promise<AppendResult[]> {
  const results: (AppendResult | undefined)[] = files.map(() => undefined);
  const one = async (index: number) => {
    const file = files[index]!;
    const header: string[] = [];
    try {
      results[index] = await append(conn, file, table, ctx, header, dialect);
    } catch (error) {
      throw new IngestFailure(nameColumn(fromDbError(error, file.name), header), index);
    }
  };
  const existing = await conn.describeTable(table);
  // Source columns differ file by file: one statement per file then (still one transaction); and
  // files of another quoting, a preamble, comments or no header are not split as the scan splits.
  if (existing === null || hasSourceColumns(ctx) || !plainText(textDialect(files[0]!, dialect))) {
    for (let i = 0; i < files.length; i++) await one(i);
    return results as AppendResult[];
  }
  // A few reads at a time: small files, kept only as long as their scan takes.
  const dates = existing.filter((c) => dateKind(c.sqlType) !== undefined);
  // The files of a group mostly share one header: its date fields are found once for each.
  const fieldsOf = new Map<string, Set<number>>();
  const scans = await mapLimit(files, 8, async (file) => {
    const bytes = await file.read(0, file.size);
    const delimiter = delimiterOf(file, dialect);
    // Keyed by its first line, when that is the whole header (no quote, which could span lines).
    const end = bytes.indexOf(LF);
    const line = end === -1 ? undefined : bytes.subarray(0, end);
    const key = line === undefined || line.includes(QUOTE) ? undefined : `${delimiter}\n${decoder.decode(line)}`;
    let fields = key === undefined ? undefined : fieldsOf.get(key);
    if (fields === undefined) {
      fields = dateFields(bytes, delimiter, existing, dates);
      if (key !== undefined) fieldsOf.set(key, fields);
    }
    return { ...scanCsv(bytes, delimiterByte(delimiter), fields), utf8: isUtf8(bytes) };
  });
  const shared = new Map<string, number[]>();
  for (const [i, file] of files.entries()) {
    const scan = scans[i]!;
    // Such a file may be of another delimiter: it goes alone, through the check in append; one
    // with dates that are not ISO goes alone too, its dates read by the watcher (append.ts).
    // One not in UTF-8 goes alone too, to fail naming its line (append.ts checks before a load).
    if (file.size === 0 || scan.irregular || !scan.isoDates || !scan.utf8 || mayBeOtherDelimited(file, dialect, scan.header)) continue;
    const key = `${file.extension}\n${scan.header}`;
    shared.set(key, [...(shared.get(key) ?? []), i]);
  }
  const grouped = new Set([...shared.values()].filter((group) => group.length > 1).flat());
  for (let i = 0; i < files.length; i++) if (!grouped.has(i)) await one(i);
  for (const group of shared.values()) {
    if (group.length < 2) continue;
    const first = files[group[0]!]!;
    const delimiter = delimiterOf(first, dialect);
    const header = parseRows(scans[group[0]!]!.header, delimiter, 1)[0] ?? [];
    // A header problem is the same for every file of the group: the first one fails alone with it.
    const names = checkHeaderNames(header, first.name);
    if (names.isErr()) throw new IngestFailure(names.error, group[0]!);
    // Columns the table lacks (schema evolution adds them): typed from each file's values, which
    // the scan did not check as dates; such files go one by one, through append.
    if (header.some((name) => !existing.some((c) => c.name === name || c.name.toLowerCase() === name.toLowerCase()))) {
      for (const i of group) await one(i);
      continue;
    }
    let matched: TableColumn[];
    try {
      matched = (
        await fitTable(
          conn,
          table,
          existing,
          header,
          addedTypes(first, textDialect(first, dialect), () => () => ({ kind: 'text' })),
          first,
          ctx,
        )
      ).matched;
    } catch (error) {
      throw new IngestFailure(fromDbError(error, first.name), group[0]!);
    }
    const target = `${qualifiedName(table)} (${columnList(matched)})`;
    const members = group.map((i) => files[i]!);
    // Every date of the group is ISO (the scan saw to it), and an ISO date without a format to
    // read it by loads as written (startsIso): only NULL markers and numbers may change on the
    // way. So such a group is read by the server itself (1,000 files of a table with dates: half the time).
    const numbers = numberFormat(dialect);
    const text = textDialect(first, dialect);
    const plan: ReadPlan = {
      columns: matched,
      delimiter,
      text,
      dates: baseDateRules(matched, dateSettings(dialect)).map((rule) => (rule && !rule.format ? undefined : rule)),
      nulls: nullMarkers(dialect),
      ...(numbers ? { numbers } : {}),
    };
    let loaded: number;
    try {
      loaded =
        ctx.capabilities.readsLocalFiles && plain(plan)
          ? await conn.execute(
              `COPY ${target} FROM ARRAY[${members.map((f) => quoteLiteral(f.stagedPath)).join(', ')}] WITH ${copyOptions(text)}`,
            )
          : await conn.copyFrom(
              `COPY ${target} FROM STDIN WITH (FORMAT csv, HEADER false, DELIMITER ${quoteLiteral(delimiter)})`,
              bodies(
                members,
                group.map((i) => scans[i]!),
                plain(plan) ? undefined : plan,
                group,
              ),
            );
    } catch (error) {
      if (isIngestFailure(error)) throw error;
      // Hyper names the file for errors in a file's structure (`file:'<path>' line:3`), not for a
      // value that does not convert (`file: 'ARRAY' line:3 column:2`): then it is a guess.
      const culprit = await culpritOf(error, members, delimiter).catch(() => undefined);
      throw culprit === undefined
        ? new IngestFailure(fromDbError(error))
        : new IngestFailure(fromDbError(error, members[culprit]!.name), group[culprit]!);
    }
    const counted = group.reduce((sum, i) => sum + scans[i]!.records, 0);
    if (loaded !== counted) {
      throw new IngestFailure(
        ingestError(
          'data',
          'CSV_GROUP_COUNT',
          `the database loaded ${loaded} rows from ${group.length} files, their records add up to ${counted}`,
          'The files are loaded one by one instead.',
        ),
      );
    }
    for (const i of group) results[i] = { rows: scans[i]!.records };
  }
  return results as AppendResult[];
}
