/**
 * The option table, part four (continued): how a CSV file is written, beyond its delimiter (see
 * text.ts): dates, NULL markers, number separators, quoting, preamble, comments, header, sniffing.
 * Each setting is checked by the CSV plugin's own rules (`csvOptionProblems`), alone and together.
 */
import { csvOptionProblems } from '../../compose.ts';
import { DATE_STYLES } from '../watch-options.ts';
import { wholeNumberFlag } from '../checks.ts';
import type { FlagText, OptionTable } from '../spec.ts';

/** The CSV dialect settings checked one by one (their own problems). */
export type DialectOption =
  | 'dateStyle'
  | 'dateFormat'
  | 'timestampFormat'
  | 'nullValues'
  | 'decimalSeparator'
  | 'thousandsSeparator'
  | 'quote'
  | 'escape'
  | 'skipLines'
  | 'commentPrefix'
  | 'header'
  | 'columnNames'
  | 'sniff';

/**
 * A CSV dialect setting's own problem, as the API and serve configs name it (`dateStyle is ...`);
 * what is wrong with settings together is `csvTogetherProblem`'s.
 */
function dialectCheck(option: DialectOption) {
  return (value: unknown): string | undefined => {
    const problem = csvOptionProblems({ [option]: value }, true).find((p) => p.option === option);
    return problem ? `${option} ${problem.problem}` : undefined;
  };
}

/** A CSV dialect flag read into its setting, or the problem naming the flag. */
function dialectFlag(option: DialectOption, flag: string, read: (text: FlagText) => unknown) {
  return (text: FlagText) => {
    const value = read(text);
    const problem = csvOptionProblems({ [option]: value }, true).find((p) => p.option === option);
    return problem
      ? { problem: `--${flag} ${problem.problem.replace(/^is (".*"), not one of (.*)$/, 'is one of $2, got $1')}` }
      : { value: value as never };
  };
}

const SEPARATOR_FIX =
  'Give one character other than a digit, a sign and the delimiter, e.g. "," for decimalSeparator with "csvDelimiter": ";".';
const QUOTE_FIX = 'Give one character other than the delimiter, e.g. "\\"" or "\\\\".';

/**
 * What is wrong with the CSV settings together (a decimal separator that is the delimiter too,
 * column names with a header line), after each has passed its own check: the option it is under
 * and the problem, the option's name left out.
 */
export function csvTogetherProblem(options: object): { readonly option: string; readonly problem: string } | undefined {
  return csvOptionProblems(options)[0];
}

const FORMAT_FIX =
  'Give a strftime-style format such as "%d.%m.%Y" (a date) or "%d/%m/%Y %H:%M" (a timestamp); the README lists the directives.';

export const CSV_DIALECT_OPTIONS = {
  dateStyle: {
    to: 'watcher',
    doc:
      'the order of day, month and year in CSV dates and JSON date strings such as `01/02/2018`: `DMY`, `MDY` or `YMD` (ISO ' +
      'dates read the same under each). ' +
      "Unset, no date is read by a guess: the file's first rows must decide the order (a first part over 12 is a day, a second part " +
      'over 12 a month), else the file fails as `DATE_AMBIGUOUS` before a row lands',
    defaultText: 'decided by the file, or the file fails',
    check: dialectCheck('dateStyle'),
    flag: {
      name: 'date-style',
      type: 'string',
      value: '<DMY|MDY|YMD>',
      help:
        'the order of day, month and year in dates such as 01/02/2018;\nwithout it (and without a format) no date is read ' +
        "by a guess: the\nfile's " +
        'first rows must decide it, else the file fails (DATE_AMBIGUOUS)',
      parse: dialectFlag('dateStyle', 'date-style', (text) => String(text).toUpperCase()),
    },
    serve: { schema: { enum: [...DATE_STYLES] }, fix: 'Use "DMY", "MDY" or "YMD".' },
  },
  dateFormat: {
    to: 'watcher',
    doc:
      'strftime-style format of CSV and JSON DATE values, for what a style cannot say, e.g. `%d.%m.%Y`, `%Y%m%d` (ISO values ' +
      'still read as ISO)',
    check: dialectCheck('dateFormat'),
    flag: {
      name: 'date-format',
      type: 'string',
      value: '<format>',
      help: 'strftime-style format of DATE values, e.g. %d.%m.%Y or %Y%m%d',
      parse: dialectFlag('dateFormat', 'date-format', String),
    },
    serve: { schema: { type: 'string' }, fix: FORMAT_FIX },
  },
  timestampFormat: {
    to: 'watcher',
    doc: 'strftime-style format of CSV and JSON TIMESTAMP values, e.g. `%d/%m/%Y %H:%M`',
    check: dialectCheck('timestampFormat'),
    flag: {
      name: 'timestamp-format',
      type: 'string',
      value: '<format>',
      help: 'of TIMESTAMP values, e.g. "%d/%m/%Y %H:%M"',
      parse: dialectFlag('timestampFormat', 'timestamp-format', String),
    },
    serve: { schema: { type: 'string' }, fix: FORMAT_FIX },
  },
  nullValues: {
    to: 'watcher',
    doc:
      'unquoted CSV fields and JSON string values equal to one of these are NULL, e.g. `["\\\\N", "NA", "NULL"]` (database ' +
      'dumps, R and pandas); the empty unquoted field stays NULL, a quoted `"NA"` in CSV stays text; type inference takes them for ' +
      'NULL too',
    defaultText: 'the empty field only',
    check: dialectCheck('nullValues'),
    flag: {
      name: 'null-value',
      type: 'string',
      multiple: true,
      value: '<text>',
      help:
        "unquoted fields equal to it are NULL, repeatable, e.g. --null-value '\\N'\n--null-value NA (the empty field stays " +
        'NULL; "NA" quoted stays text)',
      parse: dialectFlag('nullValues', 'null-value', (text) => (Array.isArray(text) ? text : [text])),
    },
    serve: {
      schema: { type: 'array', items: { type: 'string' } },
      fix: 'Give the markers as written in the files, e.g. ["\\\\N", "NA"], without quotes or line breaks.',
    },
  },
  decimalSeparator: {
    to: 'watcher',
    doc:
      "the decimal separator of numbers in CSV number columns, e.g. `','` for `1,5`; it must differ from `csvDelimiter`, and a value " +
      'not written so fails (`NUMBER_FORMAT`), never read as another number; see [CSV dialects](#csv-dialects)',
    default: '.',
    defaultText: "`'.'`",
    check: dialectCheck('decimalSeparator'),
    flag: {
      name: 'decimal-separator',
      type: 'string',
      value: '<char>',
      help: 'of numbers, e.g. , for 1,5 (default .); it differs from the delimiter',
      parse: dialectFlag('decimalSeparator', 'decimal-separator', String),
    },
    serve: { schema: { type: 'string', minLength: 1, maxLength: 1 }, fix: SEPARATOR_FIX },
  },
  thousandsSeparator: {
    to: 'watcher',
    doc:
      "the thousands separator of numbers in CSV number columns, e.g. `'.'` for `1.234,5`, `' '`, `'\\u202f'` (French, as `Intl` " +
      'writes it), `"\'"`; it must differ from `csvDelimiter` and `decimalSeparator`',
    defaultText: 'none',
    check: dialectCheck('thousandsSeparator'),
    flag: {
      name: 'thousands-separator',
      type: 'string',
      value: '<char>',
      help: "of numbers, e.g. . for 1.234,5 (or space, '); it differs from the\ndelimiter and the decimal separator",
      parse: dialectFlag('thousandsSeparator', 'thousands-separator', (text) => (text === 'space' ? ' ' : String(text))),
    },
    serve: { schema: { type: 'string', minLength: 1, maxLength: 1 }, fix: SEPARATOR_FIX },
  },
  quote: {
    to: 'watcher',
    doc: 'the quote character of CSV files, e.g. `"\'"`; see [CSV dialects](#csv-dialects)',
    default: '"',
    defaultText: "`'\"'`",
    check: dialectCheck('quote'),
    flag: {
      name: 'quote',
      type: 'string',
      value: '<char>',
      help: 'the quote character, e.g. "\'" (default ")',
      parse: dialectFlag('quote', 'quote', String),
    },
    serve: { schema: { type: 'string', minLength: 1, maxLength: 1 }, fix: QUOTE_FIX },
  },
  escape: {
    to: 'watcher',
    doc: "the character that escapes a quote (or itself) inside quotes, e.g. `'\\\\'`",
    defaultText: 'the quote (`""`)',
    check: dialectCheck('escape'),
    flag: {
      name: 'escape',
      type: 'string',
      value: '<char>',
      help: 'escapes a quote inside quotes, e.g. \'\\\' (default: the quote, as in "")',
      parse: dialectFlag('escape', 'escape', String),
    },
    serve: { schema: { type: 'string', minLength: 1, maxLength: 1 }, fix: QUOTE_FIX },
  },
  skipLines: {
    to: 'watcher',
    doc: "lines before a CSV file's header to skip, whatever they hold (a report's title and notes)",
    default: 0,
    check: dialectCheck('skipLines'),
    flag: {
      name: 'skip-lines',
      type: 'string',
      value: '<n>',
      help: "lines before the header to skip (a report's title and notes)",
      parse: wholeNumberFlag('skip-lines'),
    },
    serve: { schema: { type: 'integer', minimum: 0 }, fix: 'Give a whole number of lines, e.g. 2.' },
  },
  commentPrefix: {
    to: 'watcher',
    doc: "lines of CSV files that start with this, outside quotes, are comments, not rows, e.g. `'#'`",
    check: dialectCheck('commentPrefix'),
    flag: {
      name: 'comment',
      type: 'string',
      value: '<prefix>',
      help: "lines that start with it are comments, not rows, e.g. --comment '#'",
      parse: dialectFlag('commentPrefix', 'comment', String),
    },
    serve: { schema: { type: 'string', minLength: 1 }, fix: 'Give the characters a comment line starts with, e.g. "#".' },
  },
  header: {
    to: 'watcher',
    doc: 'false: CSV files have no header line, every line is a row, the columns named by `columnNames` or `column1`, `column2`, ...',
    default: true,
    check: dialectCheck('header'),
    flag: {
      name: 'no-header',
      type: 'boolean',
      help: 'the files have no header line; with --column-names a,b,c (default\ncolumn1, column2, ...)',
      parse: () => ({ value: false }),
    },
    serve: { schema: { type: 'boolean' }, fix: 'Use true or false (no quotes).' },
  },
  columnNames: {
    to: 'watcher',
    doc: 'with `header: false`, the names of the columns in file order, e.g. `["id", "name"]`',
    defaultText: '`column1`, `column2`, ...',
    check: dialectCheck('columnNames'),
    flag: {
      name: 'column-names',
      type: 'string',
      value: '<a,b,c>',
      help: 'with --no-header, the names of the columns in file order',
      parse: dialectFlag('columnNames', 'column-names', (text) =>
        String(text)
          .split(',')
          .map((n) => n.trim()),
      ),
    },
    serve: { schema: { type: 'array', items: { type: 'string' } }, fix: 'Give one name per column, with "header": false.' },
  },
  sniff: {
    to: 'watcher',
    doc:
      'true: each CSV file is read with the dialect its head decides (delimiter, quote, escape, comments, preamble lines, header ' +
      'or none, day/month order, decimal and thousands separators, NULL markers), the settings given kept; a file that reads ' +
      'more than one way fails as `CSV_SNIFF_UNDECIDED`, listing the candidates; see [CSV dialects](#csv-dialects)',
    default: false,
    check: dialectCheck('sniff'),
    flag: {
      name: 'sniff',
      type: 'boolean',
      help:
        'read each CSV file with the dialect its head decides (the flags\n`hyperwatch check` suggests); one that reads more ' +
        'than one way fails,\nits candidates listed',
      parse: () => ({ value: true }),
    },
    serve: { schema: { type: 'boolean' }, fix: 'Use true or false (no quotes).' },
  },
} as const satisfies Partial<OptionTable>;
