/** `hyperwatch serve` (several watchers and the HTTP API) and `hyperwatch status` (asks a serve). */
import { request as httpRequest } from 'node:http';
import { dirname, resolve } from 'node:path';
import process from 'node:process';
import { parse, stopOnSignals, toJson, UsageError } from './util.ts';
import { lineLogger } from '../log.ts';
import { startProgress } from '../observe/progress.ts';
import { DEFAULT_HTTP_PORT, type HttpConfig, isLoopback, loadConfig } from '../serve/config.ts';
import { startHttpApi } from '../serve/http.ts';
import { ServeInstance, type ServedWatcherStatus } from '../serve/server.ts';
import { defaultTokenFile, loadOrCreateToken, readTokenFile } from '../serve/token.ts';
import type { Logger } from '../types.ts';

export const SERVE_HELP = `Usage: hyperwatch serve --config <hyperwatch.json> [--log-format text|json] [--quiet]

Runs every watcher of the config file (schema: schema/hyperwatch.config.schema.json) in one
process, and an HTTP API (default http://127.0.0.1:${DEFAULT_HTTP_PORT}):
  GET /watchers, POST /watchers, DELETE /watchers/<URL-encoded dir>, GET /metrics (Prometheus).
POST and DELETE always need the bearer token (Authorization: Bearer <token>): http.tokenEnv or
http.token, else one serve makes at first start in a file only its user can read (its path is
logged; hyperwatch status finds it). Reads need it too on a host other than loopback, or with
http.protectReads. Watchers added over HTTP must lie under http.allowedRoots (default: the parent
directories of the config's watchers).
Stops on SIGINT/SIGTERM, letting in-flight files finish.`;

export const STATUS_HELP =
  `Usage: hyperwatch status [--url http://127.0.0.1:${DEFAULT_HTTP_PORT} | --url unix:<socket>] [--token <token> | ` +
  `--token-file <file>] [--json]

Prints the watchers of a running hyperwatch serve. The token: --token, else HYPERWATCH_TOKEN, else
--token-file, else (for a serve on this machine) the file serve makes when its config names no
token: $XDG_STATE_HOME/hyperwatch/serve.token (default ~/.local/state/hyperwatch/serve.token).`;

export async function serveCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    config: { type: 'string', short: 'c' },
    'log-format': { type: 'string' },
    quiet: { type: 'boolean' },
  });
  if (values.help) {
    process.stdout.write(`${SERVE_HELP}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`serve takes no arguments besides its options, got ${JSON.stringify(positionals[0])}`);
  if (!values.config) throw new UsageError('serve needs --config <file.json>');
  if (values['log-format'] && !['text', 'json'].includes(values['log-format'])) throw new UsageError('--log-format is text or json');
  const config = await loadConfig(values.config);
  const baseDir = dirname(resolve(values.config));
  let serve: ServeInstance | undefined;
  const progress = startProgress(process.stderr, () => serve?.activeFiles() ?? []);
  const logger = lineLogger(
    progress.wrap((line) => process.stderr.write(`${line}\n`)),
    {
      json: values['log-format'] === 'json',
      level: values.quiet ? 'warn' : 'info',
    },
  );
  // From the start: a signal while the watchers run their initial sweeps stops them too.
  const stopSignal = stopOnSignals(logger);
  serve = new ServeInstance({ logger, baseDir, signal: stopSignal });
  const stopped = new Promise<void>((resolve) => stopSignal.addEventListener('abort', () => resolve(), { once: true }));
  const token = apiToken(config.http, logger);
  // The API first: status works while the watchers run their initial sweeps.
  const api = await startHttpApi(serve, { ...config.http, token }, { logger, baseDir });
  logger.info('listening', {
    url: api.url,
    readsNeedToken: config.http.protectReads,
    allowedRoots: config.http.allowedRoots.join(', ') || '(none)',
  });
  try {
    for (const watcher of config.watchers) {
      if (stopSignal.aborted) break;
      try {
        await serve.add(watcher);
      } catch (error) {
        throw new Error(`watcher ${watcher.dir} → ${watcher.table} could not start: ${(error as Error).message}`, { cause: error });
      }
    }
    if (!stopSignal.aborted) logger.info('serving', { watchers: serve.size, url: api.url });
    await stopped;
    return 0;
  } finally {
    await api.close();
    // Each watcher logs its final counters as it stops.
    await serve.stopAll();
    progress.stop();
  }
}

/** The configured token, or the one in the token file (made at first start). Never logged. */
function apiToken(http: HttpConfig, logger: Logger): string {
  if (http.token !== undefined) {
    logger.info('bearer token from the config');
    return http.token;
  }
  const file = http.tokenFile ?? defaultTokenFile();
  const { token, created } = loadOrCreateToken(file);
  logger.info(created ? 'bearer token made' : 'bearer token read', { tokenFile: file });
  return token;
}

function statusLines(watchers: readonly ServedWatcherStatus[]): string {
  if (watchers.length === 0) return '(no watchers)\n';
  return watchers
    .map((w) => {
      const s = w.stats;
      const lines = [
        `${w.directory} → ${w.table} ` +
          `(${w.database}${w.databaseVersion !== undefined ? `, database version ${w.databaseVersion}` : ''}), ` +
          `since ${w.startedAt}`,
        `  ingested: ${s.filesIngested} files, ${s.rowsIngested} rows, ${s.bytesIngested} bytes   ` +
          `failed: ${s.filesFailed}   retries: ${s.retries}`,
        `  in flight: ${s.inFlight}   ` +
          `waiting: ${s.queued}${s.queued > 0 ? ` (oldest ${w.backlogOldestAgeSeconds.toFixed(1)} s)` : ''}   last ` +
          `event: ${s.lastEventAt ?? 'none'}`,
      ];
      // Older serves report neither.
      if ((s.settling ?? 0) > 0)
        lines.push(`  settling: ${s.settling} files still changing or open for writing (longest ${s.settlingLongestSeconds.toFixed(0)} s)`);
      if ((s.ignored ?? 0) > 0) lines.push(`  ignored: ${s.ignored} files left alone by include/exclude`);
      for (const f of w.active) {
        const read = f.bytesRead > 0 ? `${Math.floor((100 * f.bytesRead) / Math.max(1, f.size))}% of ` : '';
        lines.push(`  ingesting ${f.name}: ${read}${f.size} bytes, ${((Date.now() - f.startedAt) / 1000).toFixed(0)} s`);
      }
      if ((w.processes?.length ?? 0) > 1) {
        lines.push(`  processes on this directory: ${w.processes.length}`);
        for (const p of w.processes)
          lines.push(
            `    ${p.owner}${p.self ? ' (this serve)' : ''}: pid ${p.pid} on ${p.host}, holding ${p.holding}, lease until ${p.expiresAt}`,
          );
      }
      if (w.readers) {
        const [host, port] = [
          w.readers.endpoint.slice(0, w.readers.endpoint.lastIndexOf(':')),
          w.readers.endpoint.slice(w.readers.endpoint.lastIndexOf(':') + 1),
        ];
        lines.push(
          `  readers connect at ${w.readers.endpoint}: psql "host=${host} port=${port} ` +
            `user=${w.readers.user ?? 'hyperwatch'} dbname=${w.readers.database}"`,
        );
      }
      if (s.lastError) lines.push(`  last error (${s.lastError.at}): ${s.lastError.message}`);
      return lines.join('\n');
    })
    .join('\n')
    .concat('\n');
}

/**
 * `--token`, HYPERWATCH_TOKEN, `--token-file`, else the token file serve makes, but only for a
 * serve on this machine: the token must not travel to whatever `--url` names.
 */
export function statusToken(base: string, flag: string | undefined, file: string | undefined): string | undefined {
  const token = flag ?? process.env.HYPERWATCH_TOKEN;
  if (token) return token;
  if (file !== undefined) {
    const read = readTokenFile(file);
    if (read === undefined) throw new UsageError(`--token-file ${file} does not exist`);
    return read;
  }
  const local = base.startsWith('unix:') || isLoopback(new URL(base).hostname);
  return local ? readTokenFile(defaultTokenFile()) : undefined;
}

/** GET /watchers over TCP (fetch) or a Unix socket (`unix:<path>`, node:http: fetch cannot). */
async function getWatchers(base: string, token: string | undefined): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  if (!base.startsWith('unix:')) {
    const res = await fetch(`${base}/watchers`, { headers });
    return { status: res.status, text: await res.text() };
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath: base.slice('unix:'.length), path: '/watchers', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

export async function statusCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    url: { type: 'string' },
    token: { type: 'string' },
    'token-file': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    process.stdout.write(`${STATUS_HELP}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError('status takes no arguments besides its options');
  const base = (values.url ?? `http://127.0.0.1:${DEFAULT_HTTP_PORT}`).replace(/\/+$/, '');
  if (!/^(https?:\/\/|unix:.)/.test(base))
    throw new UsageError(`--url must start with http://, https:// or unix: (a socket's path), got ${JSON.stringify(values.url)}`);
  const token = statusToken(base, values.token, values['token-file']);
  let response: { status: number; text: string };
  try {
    response = await getWatchers(base, token);
  } catch (error) {
    const cause = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
    throw new Error(`no hyperwatch serve answers at ${base}${cause ? ` (${cause})` : ''}; is it running, and is --url right?`);
  }
  let body: { watchers?: ServedWatcherStatus[]; error?: string } = {};
  try {
    body = JSON.parse(response.text) as typeof body;
  } catch {
    // reported below as no watcher list
  }
  if (response.status === 401) {
    throw new UsageError(
      `${base} requires a token: pass --token or --token-file, set HYPERWATCH_TOKEN, or run as the user serve runs as (its ` +
        `token file: ${defaultTokenFile()})`,
    );
  }
  if (response.status !== 200 || !body.watchers)
    throw new Error(`${base}/watchers answered ${response.status}: ${body.error ?? 'no watcher list'}`);
  process.stdout.write(values.json ? `${toJson(body.watchers)}\n` : statusLines(body.watchers));
  return 0;
}
