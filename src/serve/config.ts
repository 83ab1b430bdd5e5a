/**
 * The `hyperwatch serve` config file: checked against its JSON Schema (schema/, with ajv) and then
 * for what a schema cannot say (table names, adapter-specific settings, one watcher per directory,
 * directories that exist). Every problem is reported on its own, as path, what is wrong and the fix.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { ServedSettings } from '../options/serve.ts';
import { type Confinement, confineWatcher } from './confine.ts';
import { directoryIssue, watcherIssues } from './watcher-issues.ts';

/**
 * One watcher of the config file (`watchers[i]`), and the body of `POST /watchers`: its directory
 * and table, and the settings of the option table (options/table.ts) that a config can give.
 */
export interface WatcherConfig extends ServedSettings {
  readonly dir: string;
  readonly table: string;
}

export interface HttpConfig {
  readonly host: string;
  readonly port: number;
  /** The configured token (`token` or `tokenEnv`; always set when `host` is not a loopback address). */
  readonly token?: string;
  /** Where serve keeps the token it makes when none is configured (resolved; default: see token.ts). */
  readonly tokenFile?: string;
  /** Listen on this Unix socket (mode 0600, resolved) instead of host and port. */
  readonly socket?: string;
  /** GET requests need the token too (always so when `host` is not a loopback address). */
  readonly protectReads: boolean;
  /** Watchers added over HTTP must lie under these (resolved); default: the config's watchers' parents. */
  readonly allowedRoots: readonly string[];
  /** Database servers (PostgreSQL URL, hyperd host:port) a watcher added over HTTP may name. */
  readonly allowedServers: readonly string[];
}

export interface ServeConfig {
  readonly http: HttpConfig;
  /** With `dir` and `database` resolved against the config file's directory. */
  readonly watchers: readonly WatcherConfig[];
}

export interface ConfigIssue {
  /** Where, as in the file: `watchers[1].maxConcurrent`; '' for the whole file. */
  readonly path: string;
  readonly problem: string;
  readonly fix: string;
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  constructor(
    readonly source: string,
    readonly issues: readonly ConfigIssue[],
  ) {
    super(`${source}: ${issues.length} problem${issues.length === 1 ? '' : 's'}:\n${issues.map(formatIssue).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function formatIssue(issue: ConfigIssue): string {
  return `  ${issue.path || '(file)'}: ${issue.problem}. Fix: ${issue.fix}`;
}

export const DEFAULT_HTTP_PORT = 7878;
export const DEFAULT_HTTP_HOST = '127.0.0.1';
export const SCHEMA_FILE = 'schema/hyperwatch.config.schema.json';

type JsonSchema = { readonly [key: string]: unknown };

/** The schema file, found from src/ (run from source) or dist/src/ (built). */
export function loadSchema(): JsonSchema {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    try {
      return JSON.parse(readFileSync(join(here, up, SCHEMA_FILE), 'utf8')) as JsonSchema;
    } catch {
      // try the next candidate
    }
  }
  throw new Error(`${SCHEMA_FILE} not found next to the package`);
}

let compiled: { file: ValidateFunction; watcher: ValidateFunction } | undefined;

function validators(): { file: ValidateFunction; watcher: ValidateFunction } {
  if (compiled) return compiled;
  // verbose: errors carry the failing value and the schema of its field (for its "x-fix").
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true });
  ajv.addKeyword('x-fix');
  const schema = loadSchema();
  const file = ajv.compile(schema);
  compiled = { file, watcher: ajv.getSchema(`${String(schema.$id)}#/definitions/watcher`)! };
  return compiled;
}

/** `/watchers/1/retryDelayMs` + `max` → `watchers[1].retryDelayMs.max`. */
function pathOf(pointer: string, extra?: string, prefix = ''): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (extra !== undefined) parts.push(extra);
  let out = prefix;
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out === '' ? p : `.${p}`;
  return out;
}

function shown(value: unknown): string {
  // A rejected endpoint or URL may carry a password (`user:secret@host`): never echo it.
  const text = JSON.stringify(value)?.replace(/([^:/@\s"]+):[^@/\s"]*@/g, '$1:***@');
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function fieldFix(schema: unknown): string | undefined {
  const fix = (schema as { 'x-fix'?: unknown } | undefined)?.['x-fix'];
  return typeof fix === 'string' ? fix : undefined;
}

function issueOf(error: ErrorObject, prefix: string): ConfigIssue {
  const parent = error.parentSchema as { properties?: Record<string, unknown> } | undefined;
  const got = `, got ${shown(error.data)}`;
  switch (error.keyword) {
    case 'required': {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      return {
        path: pathOf(error.instancePath, missing, prefix),
        problem: 'is missing',
        fix: fieldFix(parent?.properties?.[missing]) ?? `Add ${missing}.`,
      };
    }
    case 'additionalProperties': {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      const known = Object.keys(parent?.properties ?? {}).filter((k) => k !== '$schema');
      return {
        path: pathOf(error.instancePath, extra, prefix),
        problem: 'is not a known setting',
        fix: `Remove it or correct its spelling (known here: ${known.join(', ')}).`,
      };
    }
    case 'enum':
      return {
        path: pathOf(error.instancePath, undefined, prefix),
        problem: `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map(shown).join(', ')}${got}`,
        fix: fieldFix(parent) ?? 'Use one of the allowed values.',
      };
    default:
      return {
        path: pathOf(error.instancePath, undefined, prefix),
        problem: `${error.message ?? 'is invalid'}${got}`,
        fix: fieldFix(parent) ?? 'See schema/hyperwatch.config.schema.json.',
      };
  }
}

/** Schema errors, one per field (ajv may report several keywords for one value). */
function schemaIssues(errors: readonly ErrorObject[] | null | undefined, prefix: string): ConfigIssue[] {
  const seen = new Set<string>();
  const issues: ConfigIssue[] = [];
  for (const error of errors ?? []) {
    const issue = issueOf(error, prefix);
    if (seen.has(issue.path)) continue;
    seen.add(issue.path);
    issues.push(issue);
  }
  return issues;
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

export interface ValidateOptions {
  /** Relative `dir` and `database` are resolved against this (the config file's directory). */
  readonly baseDir: string;
  readonly env?: Record<string, string | undefined>;
}

function resolvePaths(w: WatcherConfig, baseDir: string): WatcherConfig {
  const at = (p: string) => resolve(baseDir, p);
  return { ...w, dir: at(w.dir), ...(w.database !== undefined ? { database: at(w.database) } : {}) };
}

/**
 * Checks one watcher (a `POST /watchers` body), resolving its paths. Issues are named from the
 * body's top (`maxConcurrent`, not `watchers[0].maxConcurrent`).
 */
export async function validateWatcher(
  raw: unknown,
  options: ValidateOptions & { readonly confine?: Confinement },
): Promise<{ watcher?: WatcherConfig; issues: ConfigIssue[]; refused?: string }> {
  const v = validators().watcher;
  if (!v(raw)) return { issues: schemaIssues(v.errors, '') };
  let w = resolvePaths(raw as WatcherConfig, options.baseDir);
  const issues = watcherIssues(w, '', options.env ?? process.env).map((i) => ({ ...i, path: i.path.replace(/^\./, '') }));
  // Before the directory is looked at: a refused path tells nothing about what exists there.
  if (options.confine) {
    const confined = await confineWatcher(w, options.confine);
    if ('refused' in confined) return { issues: [], refused: confined.refused };
    w = confined.watcher;
  }
  const dirIssue = await directoryIssue(w.dir, 'dir');
  if (dirIssue) issues.push(dirIssue);
  return issues.length > 0 ? { issues } : { watcher: w, issues };
}

/** Checks a parsed config file; throws ConfigError listing every problem. */
export async function validateConfig(raw: unknown, source: string, options: ValidateOptions): Promise<ServeConfig> {
  const env = options.env ?? process.env;
  const v = validators().file;
  if (!v(raw)) throw new ConfigError(source, schemaIssues(v.errors, ''));
  const file = raw as { http?: HttpFileSettings; watchers: WatcherConfig[] };
  const issues: ConfigIssue[] = [];
  const host = file.http?.host ?? DEFAULT_HTTP_HOST;
  let token = file.http?.token;
  if (file.http?.tokenEnv !== undefined) {
    token = env[file.http.tokenEnv] || undefined;
    if (!token)
      issues.push({
        path: 'http.tokenEnv',
        problem: `names ${file.http.tokenEnv}, which is not set`,
        fix: `Set ${file.http.tokenEnv} in the environment of hyperwatch serve.`,
      });
    else if (token.length < 16)
      issues.push({
        path: 'http.tokenEnv',
        problem: `${file.http.tokenEnv} holds fewer than 16 characters`,
        fix: 'Use a random token of at least 16 characters, e.g. `openssl rand -hex 24`.',
      });
  }
  if (file.http?.token !== undefined && file.http.tokenEnv !== undefined) {
    issues.push({
      path: 'http.token',
      problem: 'is given together with http.tokenEnv',
      fix: 'Keep one of them (tokenEnv keeps the secret out of the file).',
    });
  }
  if (file.http?.tokenFile !== undefined && token !== undefined) {
    issues.push({
      path: 'http.tokenFile',
      problem: 'is given together with a configured token',
      fix: 'Keep one of them: tokenFile is where serve keeps the token it makes when none is configured.',
    });
  }
  for (const field of ['host', 'port'] as const) {
    if (file.http?.socket !== undefined && file.http[field] !== undefined) {
      issues.push({
        path: `http.${field}`,
        problem: 'is given together with http.socket',
        fix: 'Keep http.socket (a Unix socket) or host and port (TCP), not both.',
      });
    }
  }
  if (!isLoopback(host) && token === undefined && file.http?.tokenEnv === undefined) {
    issues.push({
      path: 'http.token',
      problem: `is required when the API listens on ${host}, which is not a loopback address`,
      fix: 'Set http.tokenEnv (or http.token), or listen on "127.0.0.1".',
    });
  }
  const watchers = file.watchers.map((w) => resolvePaths(w, options.baseDir));
  const firstAt = new Map<string, number>();
  for (const [i, w] of watchers.entries()) {
    issues.push(...watcherIssues(w, `watchers[${i}]`, env));
    const earlier = firstAt.get(w.dir);
    if (earlier !== undefined)
      issues.push({
        path: `watchers[${i}].dir`,
        problem: `${w.dir} is also watched by watchers[${earlier}]`,
        fix: 'One watcher per directory: remove one of them, or give each its own directory.',
      });
    else firstAt.set(w.dir, i);
    const dirIssue = await directoryIssue(w.dir, `watchers[${i}].dir`);
    if (dirIssue) issues.push(dirIssue);
  }
  if (issues.length > 0) throw new ConfigError(source, issues);
  return { http: httpConfig(file.http ?? {}, host, token, watchers, options.baseDir), watchers };
}

/** The `http` object as written in the file. */
interface HttpFileSettings {
  readonly host?: string;
  readonly port?: number;
  readonly token?: string;
  readonly tokenEnv?: string;
  readonly tokenFile?: string;
  readonly socket?: string;
  readonly protectReads?: boolean;
  readonly allowedRoots?: readonly string[];
  readonly allowedServers?: readonly string[];
}

function httpConfig(
  http: HttpFileSettings,
  host: string,
  token: string | undefined,
  watchers: readonly WatcherConfig[],
  baseDir: string,
): HttpConfig {
  const roots = http.allowedRoots?.map((r) => resolve(baseDir, r)) ?? watchers.map((w) => dirname(w.dir));
  // The servers the config itself uses may serve watchers added over HTTP too.
  const servers = [
    ...(http.allowedServers ?? []),
    ...watchers.flatMap((w) => [w.url, w.endpoint].filter((s): s is string => s !== undefined)),
  ];
  return {
    host,
    port: http.port ?? DEFAULT_HTTP_PORT,
    ...(token !== undefined ? { token } : {}),
    ...(http.tokenFile !== undefined ? { tokenFile: resolve(baseDir, http.tokenFile) } : {}),
    ...(http.socket !== undefined ? { socket: resolve(baseDir, http.socket) } : {}),
    protectReads: http.protectReads === true || !isLoopback(host),
    allowedRoots: [...new Set(roots)],
    allowedServers: [...new Set(servers)],
  };
}

/** Reads and checks a config file. Unreadable or malformed JSON is a ConfigError too. */
export async function loadConfig(path: string, env: Record<string, string | undefined> = process.env): Promise<ServeConfig> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [
      {
        path: '',
        problem: `cannot be read (${(error as { code?: string }).code ?? String(error)})`,
        fix: 'Check the path given to --config.',
      },
    ]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(path, [
      {
        path: '',
        problem: `is not valid JSON (${(error as Error).message})`,
        fix: 'Correct the JSON syntax (no comments, no trailing commas).',
      },
    ]);
  }
  return validateConfig(raw, path, { baseDir: dirname(resolve(path)), env });
}
