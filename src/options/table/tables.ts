/** The option table, part three: the target table, and rows that do not fit it. */
import { ON_BAD_ROWS, parseMaxBadRows } from '../../columns/bad-rows.ts';
import { columnTypeProblem, parseColumnType } from '../../columns/column-types.ts';
import { checkSourceColumns, parseSourceColumns } from '../../columns/source-columns.ts';
import { APPLY_ORDERS, DUPLICATE_KEYS, LOAD_MODES, parseKey } from '../load-modes.ts';
import { SCHEMA_EVOLUTIONS } from '../../types.ts';
import { isBoolean, isOneOf, oneOfFlag, shown } from '../checks.ts';
import type { FlagText, OptionTable } from '../spec.ts';

export const TABLE_OPTIONS = {
  createTable: {
    to: 'watcher',
    doc: 'create the table from the first file when it does not exist',
    default: true,
    check: isBoolean('createTable'),
    serve: { schema: { type: 'boolean' }, fix: 'Use true or false (no quotes).' },
  },
  schemaEvolution: {
    to: 'watcher',
    doc:
      "`'addColumns'`: a file's columns the table lacks are added (nullable, typed as for a new table) before it loads; `'fail'` fails " +
      'the file; see [Tables and columns](#tables-and-columns)',
    default: 'fail',
    check: isOneOf('schemaEvolution', SCHEMA_EVOLUTIONS),
    flag: {
      name: 'schema-evolution',
      type: 'string',
      value: '<fail|add-columns>',
      help: 'a file with columns the table lacks: fail it\n(default), or add them (nullable) before loading it',
      parse: oneOfFlag('schema-evolution', { fail: 'fail', 'add-columns': 'addColumns' } as const),
    },
    serve: { schema: { enum: [...SCHEMA_EVOLUTIONS] }, fix: 'Use "fail" or "addColumns".' },
  },
  columnTypes: {
    to: 'watcher',
    doc:
      '`{ column: type }`: types in place of the inferred ones when a CSV or JSON file creates the table or adds a column, any SQL ' +
      "type the database has, e.g. `{ zip: 'TEXT' }` (a zip code `00501` keeps its zeros); see [Tables and columns](#tables-and-columns)",
    defaultText: 'inferred',
    check: (value: unknown) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return `columnTypes must be { column: type } (SQL types by column name), got ${shown(value)}`;
      for (const [column, type] of Object.entries(value)) {
        const problem = columnTypeProblem(column, type);
        if (problem) return `columnTypes ${problem}`;
      }
      return undefined;
    },
    flag: {
      name: 'column-type',
      type: 'string',
      multiple: true,
      value: '<column>=<type>',
      help: 'the SQL type of <column> when a file creates it, repeatable,\ne.g. --column-type zip=TEXT --column-type amount=NUMERIC(12,2)',
      parse: (text: FlagText) => {
        const types: Record<string, string> = {};
        for (const item of typeof text === 'string' ? [text] : Array.isArray(text) ? text : []) {
          const parsed = parseColumnType(item);
          if ('problem' in parsed) return { problem: `--column-type ${parsed.problem}` };
          const problem = columnTypeProblem(...parsed);
          if (problem) return { problem: `--column-type ${problem}` };
          types[parsed[0]] = parsed[1];
        }
        return { value: types };
      },
    },
    serve: {
      schema: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } },
      fix: 'Use an object of column names to SQL types, e.g. {"zip": "TEXT", "amount": "NUMERIC(12,2)"}.',
    },
  },
  allText: {
    to: 'watcher',
    doc: 'every column a CSV or JSON file creates (a new table, or an added column) is TEXT, but those of `columnTypes`',
    default: false,
    check: isBoolean('allText'),
    flag: {
      name: 'all-text',
      type: 'boolean',
      help: 'every column a file creates is TEXT (but those of --column-type)',
      parse: () => ({ value: true }),
    },
    serve: { schema: { type: 'boolean' }, fix: 'Use true or false (no quotes).' },
  },
  mode: {
    to: 'watcher',
    doc:
      "what a file does to the table: `'append'` its rows; `'replace'`: it becomes the whole table; `'upsert'`: its rows replace those " +
      "with the same `key`, the others are inserted; `'replace-keys'`: rows whose key value appears in the file are removed, then its " +
      'rows inserted; see [Load modes](#load-modes)',
    default: 'append',
    check: isOneOf('mode', LOAD_MODES),
    flag: {
      name: 'mode',
      type: 'string',
      value: '<append|replace|upsert|replace-keys>',
      help:
        'what a file does to the table: append its rows (default);\nreplace: it becomes the whole table; upsert: replace the rows\n' +
        'with the same --key, insert the others; replace-keys: remove\nthe rows whose key appears in the file, then insert its rows',
      parse: oneOfFlag('mode', { append: 'append', replace: 'replace', upsert: 'upsert', 'replace-keys': 'replace-keys' } as const),
    },
    serve: { schema: { enum: [...LOAD_MODES] }, fix: 'Use "append", "replace", "upsert" or "replace-keys".' },
  },
  key: {
    to: 'watcher',
    doc: "with `mode` `'upsert'` or `'replace-keys'`: the columns that identify a row, `'id'` or `['region', 'day']`",
    check: (value: unknown) => {
      if (typeof value !== 'string' && !(Array.isArray(value) && value.every((v) => typeof v === 'string')))
        return `key must be a column name or a list of them, e.g. "id" or ["region", "day"], got ${shown(value)}`;
      const parsed = parseKey(value as string | readonly string[]);
      return 'problem' in parsed ? parsed.problem : undefined;
    },
    flag: {
      name: 'key',
      type: 'string',
      value: '<column[,column...]>',
      help: 'with --mode upsert or replace-keys: the columns that identify\na row, e.g. --key id or --key region,day',
      parse: (text: FlagText) => {
        const parsed = parseKey(typeof text === 'string' ? text : '');
        return 'problem' in parsed ? { problem: `--${parsed.problem}` } : { value: parsed.key };
      },
    },
    serve: {
      schema: {
        oneOf: [
          { type: 'string', minLength: 1 },
          { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
        ],
      },
      fix: 'Use a column name such as "id", or a list such as ["region", "day"].',
    },
  },
  duplicateKeys: {
    to: 'watcher',
    doc:
      "with `mode` `'upsert'`: two rows of one file with the same key: the later one in the file wins (`'last'`), or the file " +
      "fails (`'fail'`)",
    default: 'last',
    check: isOneOf('duplicateKeys', DUPLICATE_KEYS),
    flag: {
      name: 'duplicate-keys',
      type: 'string',
      value: '<last|fail>',
      help: 'with upsert: two rows of one file with the same key: the later\none wins (default last), or the file fails',
      parse: oneOfFlag('duplicate-keys', { last: 'last', fail: 'fail' } as const),
    },
    serve: { schema: { enum: [...DUPLICATE_KEYS] }, fix: 'Use "last" or "fail".' },
  },
  order: {
    to: 'watcher',
    doc:
      "the order ready files are applied in: `'arrival'`, or `'name'` (a file never overtakes a ready file whose name sorts before it, " +
      'across processes on one inbox too; files then go one at a time)',
    default: 'arrival',
    check: isOneOf('order', APPLY_ORDERS),
    flag: {
      name: 'order',
      type: 'string',
      value: '<arrival|name>',
      help: 'the order ready files are applied in: arrival (default), or\nname (by file name, one at a time)',
      parse: oneOfFlag('order', { arrival: 'arrival', name: 'name' } as const),
    },
    serve: { schema: { enum: [...APPLY_ORDERS] }, fix: 'Use "arrival" or "name".' },
  },
  sourceColumns: {
    to: 'watcher',
    doc:
      "`{ file?, claim?, committed? }`: names of columns filled on every row with the file's name, its claim id (as in the ledger), " +
      "its transaction's time; created with the table; see [Tables and columns](#tables-and-columns)",
    check: (value: unknown) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return `sourceColumns must be { file?, claim?, committed? } (column names), got ${shown(value)}`;
      const checked = checkSourceColumns(value);
      return checked.isErr() ? `sourceColumns: ${checked.error}` : undefined;
    },
    flag: {
      name: 'source-column',
      type: 'string',
      multiple: true,
      value: '<key>=<column>',
      help:
        "fill <column> on every row, repeatable; keys: file (the\nfile's name), claim (its claim id), committed (its " +
        "transaction's\ntime), e.g. --source-column file=_source_file",
      parse: (text: FlagText) => {
        const parsed = parseSourceColumns(typeof text === 'string' ? [text] : Array.isArray(text) ? text : []);
        return parsed.isErr() ? { problem: `--source-column: ${parsed.error}` } : { value: parsed.value };
      },
    },
    serve: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          file: { type: 'string', minLength: 1, description: "Column filled with the data file's name." },
          claim: { type: 'string', minLength: 1, description: "Column filled with the file's claim id (as in the ledger)." },
          committed: {
            type: 'string',
            minLength: 1,
            description: "Column filled with the time the file's transaction began (timestamptz).",
          },
        },
      },
      fix: 'Use an object such as {"file": "_source_file", "claim": "_claim_id", "committed": "_committed_at"}.',
      checkFix: 'Give each source column its own non-empty name, e.g. {"file": "_source_file", "claim": "_claim_id"}.',
    },
  },
  skipDuplicateContent: {
    to: 'watcher',
    doc:
      'skip a file whose content (SHA-256) this table already received: it is removed as if ingested, with a ledger row of 0 rows ' +
      'carrying its checksum, counted in `duplicatesSkipped`. Off by default: two drops with identical content are two files and both ' +
      'land',
    default: false,
    check: isBoolean('skipDuplicateContent'),
    flag: { name: 'skip-duplicates', type: 'boolean', help: 'skip a file whose content (SHA-256) the table already received' },
    serve: { schema: { type: 'boolean' }, fix: 'Use true or false (no quotes).' },
  },
  onBadRows: {
    to: 'watcher',
    doc:
      "`'skip'`: CSV and JSON-lines rows that do not parse or do not convert to their column are left out and set aside in " +
      "`failed/<name>.rejected.csv` (`.jsonl` for JSON) with their line and reason, and the good rows commit; `'fail'`: a bad row " +
      'fails the file. See [Bad rows](#bad-rows)',
    default: 'fail',
    check: (value: unknown) =>
      (ON_BAD_ROWS as readonly unknown[]).includes(value) ? undefined : `onBadRows must be 'fail' or 'skip', got ${String(value)}`,
    flag: {
      name: 'on-bad-rows',
      type: 'string',
      value: '<fail|skip>',
      help:
        'skip: leave out CSV / JSON-lines rows that do not parse or do\nnot convert to their column, set aside in ' +
        'failed/X.rejected.csv\n(.jsonl for JSON) with line and reason; default fail (the file fails)',
      parse: oneOfFlag('on-bad-rows', { fail: 'fail', skip: 'skip' } as const),
    },
    serve: { schema: { enum: [...ON_BAD_ROWS] }, fix: 'Use "fail" or "skip".' },
  },
  maxBadRows: {
    to: 'watcher',
    doc:
      "with `onBadRows` `'skip'`: a file with more bad rows than this count (e.g. 100), or than this fraction of its rows (below 1, " +
      'e.g. 0.01), fails whole',
    defaultText: 'no limit',
    check: (value: unknown) => {
      const parsed = parseMaxBadRows(typeof value === 'number' ? value : String(value));
      return 'error' in parsed ? parsed.error : undefined;
    },
    flag: {
      name: 'max-bad-rows',
      type: 'string',
      value: '<n|fraction>',
      requires: { flag: 'on-bad-rows', value: 'skip', problem: '--max-bad-rows needs --on-bad-rows skip' },
      help: 'with skip: a file with more bad rows than n (100), or than\nthis fraction of its rows (0.01), fails whole; default no limit',
      parse: (text: FlagText) => {
        const parsed = parseMaxBadRows(typeof text === 'string' ? text : String(text));
        return 'error' in parsed ? { problem: `--max-bad-rows: ${parsed.error}` } : { value: Number(text) };
      },
    },
    serve: {
      schema: { type: 'number', minimum: 0 },
      fix: 'Use a whole number of rows (e.g. 100) or a fraction between 0 and 1 (e.g. 0.01).',
    },
  },
} as const satisfies Partial<OptionTable>;
