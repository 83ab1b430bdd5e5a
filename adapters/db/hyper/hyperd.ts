/**
 * Lifecycle of an embedded `hyperd`: start on loopback, restart when it dies, stop for good.
 *
 * hyperd is started with `--callback-connection` pointing at a TCP listener of ours: it connects
 * back, sends the address it listens on, and shuts itself down when that connection closes. So
 * when our process goes away for any reason, SIGKILL included, the kernel closes the socket and
 * hyperd exits: no orphan server is left behind. Hyper's own client APIs use the same mechanism.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import type { Logger } from '../../../src/types.ts';
import { TABLEAU_ROLE } from './file-role.ts';

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

export interface HyperdOptions {
  readonly binary: string;
  readonly logger: Logger;
  /** The server's user, owner of the databases it creates (default `tableau_internal_user`, as Tableau's tools run it). */
  readonly user?: string;
  /** Directory for hyperd's own log; a temporary one (removed on stop) by default. */
  readonly logDir?: string;
  /** How long to wait for hyperd to report its address. */
  readonly startTimeoutMs?: number;
}

/** The error code of a restart of hyperd that failed (a connection error, retried). */
export const HYPERD_RESTARTING = 'HYPERD_RESTARTING';

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** At process exit (a normal end, `process.exit`): take every embedded hyperd down with us. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGTERM');
  });
}

/** Reads the callback message: one length byte, `tab.tcp://host:port`, a NUL. */
function parseCallback(data: Buffer): Endpoint | undefined {
  const match = /tab\.tcp:\/\/([^:/\s]+):(\d+)/.exec(data.toString('latin1'));
  return match ? { host: match[1]!, port: Number(match[2]) } : undefined;
}

const LOG_DIR_PREFIX = 'hyperwatch-hyperd-';

/**
 * A temporary directory for hyperd's log, named after our pid. A process that was killed cannot
 * remove its own, so each start first removes those whose process is gone: months of restarts
 * must not fill the temp directory.
 */
function ownLogDir(): string {
  const root = tmpdir();
  for (const name of safeReaddir(root)) {
    const pid = Number(/^hyperwatch-hyperd-(\d+)-/.exec(name)?.[1]);
    if (pid && pid !== process.pid && !isAlive(pid)) rmSync(join(root, name), { recursive: true, force: true });
  }
  return mkdtempSync(join(root, `${LOG_DIR_PREFIX}${process.pid}-`));
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => name.startsWith(LOG_DIR_PREFIX));
  } catch {
    return [];
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, someone else's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class Hyperd {
  #child: ChildProcess | undefined;
  #callback: net.Socket | undefined;
  #listener: net.Server | undefined;
  #endpoint: Promise<Endpoint> | undefined;
  #ownLogDir: string | undefined;
  #stopped = false;
  #starts = 0;

  constructor(private readonly options: HyperdOptions) {}

  /** The server's address, starting it (or starting it again after it died) when needed. */
  endpoint(): Promise<Endpoint> {
    if (this.#stopped) return Promise.reject(Object.assign(new Error('embedded hyperd was stopped'), { code: 'CONNECTION_ENDED' }));
    this.#endpoint ??= this.#start().catch((error: unknown) => {
      this.#endpoint = undefined;
      throw error;
    });
    return this.#endpoint;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** How many times hyperd was started (more than one means it died and was restarted). */
  get starts(): number {
    return this.#starts;
  }

  async #start(): Promise<Endpoint> {
    installExitHook();
    const listener = net.createServer();
    this.#listener = listener;
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(0, '127.0.0.1', () => resolve());
    });
    const callbackPort = (listener.address() as net.AddressInfo).port;
    const logDir = this.options.logDir ?? (this.#ownLogDir ??= ownLogDir());
    const child = spawn(
      this.options.binary,
      [
        'run',
        '--skip-license',
        '--no-password',
        `--init-user=${this.options.user ?? TABLEAU_ROLE}`,
        '--listen-connection',
        'tab.tcp://127.0.0.1:0',
        `--log-dir=${logDir}`,
        // hyperd logs every query; unbounded, that is gigabytes over months of small files.
        '--log-file-size-limit=32m',
        '--log-file-max-count=2',
        '--callback-connection',
        `tab.tcp://127.0.0.1:${callbackPort}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.#child = child;
    this.#starts++;
    live.add(child);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });

    const endpoint = await new Promise<Endpoint>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`hyperd did not start within ${this.options.startTimeoutMs ?? 30000} ms: ${stderr.trim()}`)),
        this.options.startTimeoutMs ?? 30000,
      );
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`hyperd exited during start-up (code ${code}, signal ${signal}): ${stderr.trim()}`));
      });
      listener.once('connection', (socket) => {
        this.#callback = socket;
        socket.on('error', () => {});
        let received = Buffer.alloc(0);
        socket.on('data', (data: Buffer) => {
          received = Buffer.concat([received, data]);
          const parsed = parseCallback(received);
          if (parsed) {
            clearTimeout(timer);
            resolve(parsed);
          }
        });
      });
    }).catch((error: unknown) => {
      // Killed or stuck during start-up: nothing of this run may linger (its listener, a hyperd
      // that never reported); the next connection starts another.
      listener.close();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      live.delete(child);
      if (this.#child === child) this.#child = undefined;
      // A restart that failed is the database being away, as the death before it was: a
      // connection error, so the connection that asked is replaced and its work retried (a
      // postgres.js connection whose socket could not be made is never usable again).
      if (this.#starts > 1) throw Object.assign(error as Error, { code: HYPERD_RESTARTING });
      throw error;
    });
    listener.close();

    child.once('exit', (code, signal) => {
      live.delete(child);
      if (this.#child === child) {
        this.#child = undefined;
        this.#endpoint = undefined;
        this.#callback?.destroy();
        this.#callback = undefined;
        if (!this.#stopped) {
          this.options.logger.warn('embedded hyperd exited; it is started again on the next connection', {
            code,
            signal,
            stderr: stderr.trim().slice(-500) || undefined,
          });
        }
      }
    });
    this.options.logger.debug('embedded hyperd started', { pid: child.pid, port: endpoint.port, binary: this.options.binary });
    return endpoint;
  }

  /**
   * Stops hyperd for good. SIGTERM first: that shutdown writes attached databases out, while the
   * callback connection closing (our process dying) makes hyperd exit without doing so.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    const child = this.#child;
    this.#listener?.close();
    if (child && child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => child.kill('SIGKILL'), 15000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill('SIGTERM');
      });
    }
    this.#callback?.destroy();
    live.delete(child as ChildProcess);
    if (this.#ownLogDir) rmSync(this.#ownLogDir, { recursive: true, force: true });
  }
}
