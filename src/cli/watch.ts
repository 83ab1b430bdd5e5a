/** `hyperwatch watch`: one watcher, until a signal stops it (or, with --once, until the files present are done). */
import process from 'node:process';
import { openWatcher } from '../api.ts';
import { DB_FLAGS, DB_HELP, dbFromFlags, parse, stopOnSignals, toJson, UsageError } from './util.ts';
import { isLogLevel, lineLogger } from '../log.ts';
import { flagsHelp, WATCH_FLAG_ENTRIES, WATCH_FLAGS, watchOptionsFromFlags } from '../options/flags.ts';
import { startProgress } from '../observe/progress.ts';
import type { WatcherHandle, WatchSummary } from '../watcher/handle.ts';

const HELP = `Usage: hyperwatch watch <dir> --table <name> [options]

Ingests every X whose sentinel X.ready exists (with --ready stable: once X stopped changing)
exactly once (small files ready together share a transaction, each with its own ledger row); removes both on success (or archives them),
moves both to <dir>/failed/ with X.error on failure. X.csv.gz, X.jsonl.zst and the like
(gzip, zstd) are decompressed as they stream.

Options:
  --table <name>          target table, "name" or "schema.name" (created from the first file),
                          as written: --table "Order Items"; a dotted part in quotes: '"Q1.2024"'
${DB_HELP}
${flagsHelp(WATCH_FLAG_ENTRIES)}
  --once                  process the ready files present, then exit (1 if any failed);
                          with --ready stable, once the files present stopped changing
  --json                  print the summary as one JSON object on stdout
  --log-format <text|json>  log lines on stderr (default text)
  --quiet                 log warnings and errors only
  --log-level <debug|info|warn|error>  the least severe lines logged (default info; debug says why
                          a file waits, a takeover is not made yet, a checkpoint ran late)
  -h, --help`;

function printSummary(summary: WatchSummary, json: boolean): void {
  if (json) {
    process.stdout.write(`${toJson(summary)}\n`);
    return;
  }
  const s = summary.stats;
  const lines = [
    `${summary.directory} → ${summary.table} ` +
      `(${summary.database}${summary.databaseVersion !== undefined ? `, database version ${summary.databaseVersion}` : ''})`,
    `  files ingested: ${s.filesIngested}   rows: ${s.rowsIngested}   bytes: ${s.bytesIngested}`,
    `  files failed:   ${s.filesFailed}${s.lastError ? `   last error: ${s.lastError.message}` : ''}`,
  ];
  if (s.rowsRejected) lines.push(`  rows rejected:  ${s.rowsRejected} (set aside in failed/*.rejected.*)`);
  if (s.retries || s.recovered || s.orphans)
    lines.push(`  retries: ${s.retries}   recovered: ${s.recovered}   orphan sentinels: ${s.orphans}`);
  if (s.takenOver) lines.push(`  taken over from processes that died: ${s.takenOver}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * `--once --ready stable`: no file is ready when the start-up sweep ends, so the run waits until
 * the files it found stopped changing and landed (or failed). One that never stops keeps it
 * waiting, and the log says so, as when watching.
 */
async function settled(handle: WatcherHandle): Promise<void> {
  const { stats } = handle;
  while (!handle.stopping && (stats.settling > 0 || stats.queued > 0 || stats.inFlight > 0)) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    await handle.whenIdle();
  }
}

export async function watchCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    table: { type: 'string' },
    ...DB_FLAGS,
    ...WATCH_FLAGS,
    once: { type: 'boolean' },
    json: { type: 'boolean' },
    'log-format': { type: 'string' },
    quiet: { type: 'boolean' },
    'log-level': { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('watch expects exactly one directory');
  if (!values.table) throw new UsageError('watch needs --table <name>');
  if (values['log-format'] && !['text', 'json'].includes(values['log-format'])) throw new UsageError('--log-format is text or json');
  const level = values['log-level'] ?? (values.quiet ? 'warn' : 'info');
  if (!isLogLevel(level)) throw new UsageError(`--log-level is debug, info, warn or error, not ${JSON.stringify(level)}`);
  if (values.quiet && values['log-level'] !== undefined) throw new UsageError('--quiet and --log-level: give one of them');
  const options = watchOptionsFromFlags(values);
  if ('problem' in options) throw new UsageError(options.problem);
  let handle: WatcherHandle | undefined;
  // A live progress line for long files, on a terminal only; log lines clear it first.
  const progress = startProgress(process.stderr, () => handle?.activeFiles() ?? []);
  const logger = lineLogger(
    progress.wrap((line) => process.stderr.write(`${line}\n`)),
    {
      json: values['log-format'] === 'json',
      level,
    },
  );
  const db = dbFromFlags(values, logger, positionals[0]);
  // From the start: a signal during a long recovery or initial sweep stops it cleanly too.
  const stopSignal = stopOnSignals(logger);
  try {
    handle = await openWatcher(positionals[0]!, values.table, {
      signal: stopSignal,
      db,
      ...options.value,
      logger,
    });
    // Runs until a signal stops it (or it stops itself, taken over by another process).
    if (!values.once) await handle.whenStopped();
    else if (options.value.readyWhen === 'stable') await settled(handle);
    const summary = await handle.stop();
    progress.stop();
    printSummary(summary, values.json === true);
    if (handle.fenced) return 1;
    return values.once && summary.stats.filesFailed > 0 ? 1 : 0;
  } finally {
    progress.stop();
    await db.close();
  }
}
