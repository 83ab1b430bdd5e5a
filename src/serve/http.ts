/**
 * The HTTP API of `hyperwatch serve`, on node:http (which Deno and Bun implement too):
 *
 *   GET    /watchers        every watcher's status and stats
 *   POST   /watchers        start a watcher (body: one watcher as in the config file)
 *   DELETE /watchers/:dir   stop the watcher of a directory (URL-encoded path)
 *   GET    /metrics         Prometheus text
 *
 * Changing requests need `Authorization: Bearer <token>` (see `authorize`), and watchers added
 * over HTTP are confined to the roots and servers the config allows (confine.ts).
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from '../types.ts';
import { type HttpConfig, validateWatcher } from './config.ts';
import { listenOn } from './listen.ts';
import { renderMetrics } from './metrics.ts';
import type { ServeInstance } from './server.ts';

export interface HttpApi {
  /** `http://host:port`, with the port actually bound (config port 0 picks one), or `unix:<path>`. */
  readonly url: string;
  close(): Promise<void>;
}

/** The API's settings: the config's, with the token serve was given or made. */
export type ApiConfig = HttpConfig & { readonly token: string };

const MAX_BODY = 64 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, `the body is over ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw new HttpError(400, `the body is not JSON: ${(error as Error).message}`);
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function loopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  return name === 'localhost' || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name);
}

/**
 * Changing requests (anything but GET) always need the token. Reads are open on loopback unless
 * `protectReads` (Prometheus scrapes without one), but never to a web page: an `Origin` header,
 * or a `Host` that is not a loopback name, means a browser is talking to us (DNS rebinding, CSRF).
 */
function authorize(req: IncomingMessage, config: ApiConfig): void {
  const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  if (match && sameSecret(match[1]!.trim(), config.token)) return;
  if (req.method === 'GET' && !config.protectReads) {
    if (req.headers.origin !== undefined || !loopbackHost(req.headers.host)) {
      throw new HttpError(
        403,
        'requests from web pages are refused; use a loopback address (127.0.0.1) as the host, without an Origin header',
      );
    }
    return;
  }
  throw new HttpError(
    401,
    `${req.method === 'GET' ? 'reading' : 'changing'} needs the bearer token: send Authorization: Bearer <token> (serve ` +
      `logs the path of its token file at start)`,
  );
}

async function route(serve: ServeInstance, req: IncomingMessage, res: ServerResponse, config: ApiConfig, baseDir: string): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  if (path === '/metrics' && req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' });
    res.end(renderMetrics(serve.metricsSources()));
    return;
  }
  if (path === '/watchers' && req.method === 'GET') return send(res, 200, { watchers: serve.status() });
  if (path === '/watchers' && req.method === 'POST') {
    const body = await readJson(req);
    const { watcher, issues, refused } = await validateWatcher(body, { baseDir, confine: config });
    if (refused !== undefined) throw new HttpError(403, refused);
    if (!watcher) throw new HttpError(400, 'invalid watcher', { issues });
    try {
      const handle = await serve.add(watcher);
      return send(res, 201, { watcher: serve.status().find((s) => s.directory === handle.dir) });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'DUPLICATE_WATCHER') throw new HttpError(409, (error as Error).message);
      if (code === 'WATCH_CONFIG') throw new HttpError(400, (error as Error).message);
      throw new HttpError(502, `the watcher could not start: ${(error as Error).message}`);
    }
  }
  if (path.startsWith('/watchers/') && req.method === 'DELETE') {
    let dir: string;
    try {
      dir = decodeURIComponent(path.slice('/watchers/'.length));
    } catch {
      throw new HttpError(400, 'the directory is not validly URL-encoded');
    }
    if (dir === '') throw new HttpError(400, 'name the directory: DELETE /watchers/<URL-encoded path>');
    const summary = await serve.remove(dir);
    if (!summary) throw new HttpError(404, `${dir} is not being watched`);
    return send(res, 200, { stopped: summary });
  }
  if (path === '/watchers' || path.startsWith('/watchers/') || path === '/metrics')
    throw new HttpError(405, `${req.method} is not allowed on ${path}`);
  throw new HttpError(404, `no such endpoint: ${path} (endpoints: GET /watchers, POST /watchers, DELETE /watchers/:dir, GET /metrics)`);
}

/** Starts the API; resolves once it listens. */
export function startHttpApi(serve: ServeInstance, config: ApiConfig, options: { logger: Logger; baseDir: string }): Promise<HttpApi> {
  const server = createServer((req, res) => {
    void (async () => {
      try {
        authorize(req, config);
        await route(serve, req, res, config, options.baseDir);
      } catch (error) {
        const status = error instanceof HttpError ? error.status : 500;
        if (status === 500) options.logger.error('HTTP API error', { method: req.method, url: req.url, error: String(error) });
        if (!res.headersSent) {
          if (status === 401) res.setHeader('www-authenticate', 'Bearer');
          send(res, status, { error: (error as Error).message, ...(error instanceof HttpError ? error.extra : {}) });
        } else res.end();
      }
    })();
  });
  return listenOn(server, config).then((url) => ({
    url,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections?.();
      }),
  }));
}
