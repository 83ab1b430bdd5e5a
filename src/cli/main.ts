/**
 * The `hyperwatch` command. Results go to stdout, logs to stderr. Exit codes: 0 success,
 * 1 files failed (`watch --once`) or a runtime error, 2 usage or configuration error.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { WatchConfigError } from '../options/error.ts';
import { UsageError } from './util.ts';

const HELP = `hyperwatch: append files dropped into a directory to a Tableau Hyper (or PostgreSQL) table, exactly once.

Usage:
  hyperwatch watch <dir> --table <name> [options]   watch a directory (see: hyperwatch watch --help)
  hyperwatch serve --config <file.json>             several watchers and an HTTP API in one process
  hyperwatch status [--url http://127.0.0.1:7878]   the watchers of a running serve
  hyperwatch check <file> [--table <name>] [options]  what a file would do, without dropping it
  hyperwatch query [options] "<sql>"                run SQL and print the rows
  hyperwatch history [--since 2h] [--table <name>]  what was ingested when (the ledger)
  hyperwatch export --table <name> --to <file>      one table, alone, in a file Tableau opens
  hyperwatch drop <file> <dir>                      drop a file into a watched directory, safely
  hyperwatch replay <dir>/failed/<file>             send a fixed failed file back in
  hyperwatch install-hyperd [--platform <p>]        fetch hyperd, checked, into the user cache
  hyperwatch --version

Producers: write X.csv (to a temp name, then rename), then create the empty file X.csv.ready.`;

function version(): string {
  for (const up of ['../..', '../../..']) {
    try {
      return (JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), up, 'package.json'), 'utf8')) as { version: string })
        .version;
    } catch {
      // try the next candidate: src/cli/ when run from source, dist/src/cli/ when built
    }
  }
  return 'unknown';
}

function jsonLogs(args: readonly string[]): boolean {
  const i = args.indexOf('--log-format');
  return args.includes('--log-format=json') || (i >= 0 && args[i + 1] === 'json');
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    // Each command's code is imported when it runs, not at start, so that a start loads what its
    // command needs (`watch` neither the serve config's JSON Schema validator nor the export code):
    // every start of the command pays for the modules it loads.
    switch (command) {
      case 'watch':
        return await (await import('./watch.ts')).watchCommand(rest);
      case 'check':
        return await (await import('./check.ts')).checkCommand(rest);
      case 'query':
        return await (await import('./query.ts')).queryCommand(rest);
      case 'serve':
        return await (await import('./serve.ts')).serveCommand(rest);
      case 'status':
        return await (await import('./serve.ts')).statusCommand(rest);
      case 'history':
        return await (await import('./producer.ts')).historyCommand(rest);
      case 'export':
        return await (await import('./export.ts')).exportCommand(rest);
      case 'drop':
        return await (await import('./producer.ts')).dropCommand(rest);
      case 'replay':
        return await (await import('./producer.ts')).replayCommand(rest);
      case 'install-hyperd':
        return await (await import('./install-hyperd.ts')).installHyperdCommand(rest);
      case '--version':
      case '-v':
        process.stdout.write(`${version()}\n`);
        return 0;
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        process.stdout.write(`${HELP}\n`);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(
          `unknown command ${JSON.stringify(command)} (commands: watch, check, serve, status, query, history, export, drop, ` +
            `replay, install-hyperd)`,
        );
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const usage =
      error instanceof UsageError ||
      error instanceof WatchConfigError ||
      code === 'DUPLICATE_WATCHER' ||
      code === 'HYPERD_NOT_FOUND' ||
      code === 'CONFIG_INVALID' ||
      code === 'STAGING_OTHER_MOUNT' ||
      code === 'DATABASE_HELD' ||
      code === 'EXPORT_REFUSED';
    const message = `${(error as Error).message ?? String(error)}${error instanceof UsageError ? ' (see --help)' : ''}`;
    // With --log-format json, stderr carries JSON lines only: the final error too.
    if (jsonLogs(rest))
      process.stderr.write(
        `${JSON.stringify({ time: new Date().toISOString(), level: 'error', message, ...(typeof code === 'string' ? { code } : {}) })}\n`,
      );
    else process.stderr.write(`hyperwatch: ${message}\n`);
    return usage ? 2 : 1;
  }
}
