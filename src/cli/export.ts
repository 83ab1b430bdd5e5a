/** `hyperwatch export`: one table, alone, in a new `.hyper` file that Tableau opens (see export.ts). */
import process from 'node:process';
import { databaseVersionFlag, parse, toJson, UsageError } from './util.ts';
import { exportExtract } from '../export/extract.ts';
import { lineLogger } from '../log.ts';

export const EXPORT_HELP = `Usage: hyperwatch export --database <file.hyper> --table <name> --to <out.hyper> [options]

Writes the table, alone (none of hyperwatch's own tables), into a new .hyper file that Tableau
Desktop, Tableau Server and the Hyper API open: made as their role (tableau_internal_user), with
the same column types, and every row committed when the export began. It also converts a file
of the role earlier hyperwatch releases used (hyperwatch), which those tools cannot open. While
a hyperwatch process writes to the database, the table is read through that process's hyperd.

Options:
  --database <file>       the .hyper file to read (default ./hyperwatch.hyper)
  --table <name>          the table, "name" or "schema.name"
  --to <file>             the new .hyper file; an existing one is refused unless --force
  --as <name>             the table's name in the new file (default: as in the source);
                          --as Extract.Extract for a Tableau-style extract
  --database-version <0|1|2|3|4>  the file format version of the new file (default: the
                          source's; which Tableau releases open which: README, Database versions)
  --force                 replace an existing --to file (written beside it, then renamed over it)
  --endpoint <[user@]host:port>  read the database on this running hyperd
  --json                  print the result as one JSON object on stdout
  --log-format <text|json>  log lines on stderr (default text)
  --quiet                 log warnings and errors only
  -h, --help`;

export async function exportCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    database: { type: 'string' },
    table: { type: 'string' },
    to: { type: 'string' },
    as: { type: 'string' },
    'database-version': { type: 'string' },
    force: { type: 'boolean' },
    endpoint: { type: 'string' },
    json: { type: 'boolean' },
    'log-format': { type: 'string' },
    quiet: { type: 'boolean' },
  });
  if (values.help) {
    process.stdout.write(`${EXPORT_HELP}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`export takes no arguments besides its options, got ${JSON.stringify(positionals[0])}`);
  if (!values.table) throw new UsageError('export needs --table <name>');
  if (!values.to) throw new UsageError('export needs --to <out.hyper>');
  if (values['log-format'] && !['text', 'json'].includes(values['log-format'])) throw new UsageError('--log-format is text or json');
  const databaseVersion = databaseVersionFlag(values['database-version']);
  const logger = lineLogger((line) => process.stderr.write(`${line}\n`), {
    json: values['log-format'] === 'json',
    level: values.quiet ? 'warn' : 'info',
  });
  const result = await exportExtract({
    table: values.table,
    to: values.to,
    ...(values.database !== undefined ? { database: values.database } : {}),
    ...(values.as !== undefined ? { as: values.as } : {}),
    ...(databaseVersion !== undefined ? { databaseVersion } : {}),
    ...(values.endpoint !== undefined ? { endpoint: values.endpoint } : {}),
    force: values.force === true,
    logger,
  });
  process.stdout.write(
    values.json
      ? `${toJson(result)}\n`
      : `${result.to}: ${result.table}, ${result.rows} row${result.rows === 1 ? '' : 's'}, ${result.columns} ` +
          `column${result.columns === 1 ? '' : 's'}; database version ${result.databaseVersion}, role ${result.role} ` +
          `(${result.seconds.toFixed(2)} s)\n`,
  );
  return 0;
}
