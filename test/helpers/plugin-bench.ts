/**
 * An ingester plugin on its own, on a real embedded hyperd, run the way the core runs it: files
 * claimed as the watcher claims them (so the plugin reads through the claimed descriptor), one
 * transaction per attempt, a fresh one when the plugin asks for a retry.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { IngestFailure, isIngestFailure } from '../../src/errors.ts';
import { claimFile, type OpenedFile, reopenStaged } from '../../src/files.ts';
import type { DbAdapter, DbPool, IngestContext, IngesterPlugin, IngestError, Logger } from '../../src/types.ts';
import { count, type HyperFixture, hyperFixture, suiteResource } from './env.ts';

/** One load of a file: its rows, or its error, and the attempt it ended on. */
export interface Outcome {
  readonly rows?: number;
  readonly error?: IngestError;
  readonly attempts: number;
}

/** A database to load into: the bench's own, or another one (e.g. of another file format version). */
export interface PluginTarget {
  readonly db: DbAdapter;
  readonly pool: DbPool;
}

export interface IngestOptions {
  /** Default: the bench's database. */
  readonly target?: PluginTarget;
  /**
   * As a database that reads no local files and takes no Arrow stream (PostgreSQL, a remote
   * hyperd), so that the plugin takes its fallback path (decoding, CSV) on the same server.
   */
  readonly remote?: boolean;
  /** `schema.createTable` (default true). */
  readonly createTable?: boolean;
}

/** The suite's hyperd database (root, adapter, pool for checks), and what loads into it. */
export interface PluginBench extends Omit<HyperFixture, 'close'> {
  /** Where claim() writes files before claiming them. */
  readonly inbox: string;
  /** Writes `content` (when given; else the file must be there) into the inbox and claims it. */
  claim(name: string, content?: string | Uint8Array): Promise<OpenedFile>;
  /** Opens the same staged file again (as after a crash), for a second load of the same bytes. */
  reopen(file: OpenedFile): Promise<OpenedFile>;
  /** Loads a claimed file into `table`, as src/watcher.ts does. */
  ingest(file: OpenedFile, table: string, options?: IngestOptions): Promise<Outcome>;
}

function extensionOf(name: string): string {
  return name.slice(name.lastIndexOf('.')).toLowerCase();
}

/** The table's columns as name → SQL type, or null when there is no such table. */
export async function columnTypes(pool: DbPool, table: string): Promise<Record<string, string> | null> {
  const columns = await pool.transaction((conn) => conn.describeTable({ name: table }));
  return columns && Object.fromEntries(columns.map((c) => [c.name, c.sqlType]));
}

/** The outcome's error; fails the test when the load succeeded. */
export function expectError(outcome: Outcome): IngestError {
  assert.ok(outcome.error, `expected an error, got ${JSON.stringify(outcome)}`);
  assert.equal(outcome.rows, undefined);
  return outcome.error;
}

/**
 * A bench for `ingester` in the enclosing `describe` (call this in its body): a hyperd database,
 * an inbox and a staging directory, opened before the tests; the claimed files closed and the
 * database removed after them. A load gives up after `maxAttempts` attempts.
 */
export function usePluginBench(ingester: IngesterPlugin, options: { maxAttempts: number; logger: Logger }): PluginBench {
  const opened: OpenedFile[] = [];
  const state = suiteResource(
    async () => {
      const fx = await hyperFixture();
      const inbox = join(fx.root, 'in');
      const staging = join(fx.root, 'staging');
      await mkdir(inbox);
      await mkdir(staging);
      return { fx, inbox, staging };
    },
    async ({ fx }) => {
      for (const file of opened.splice(0)) await file.close();
      await fx.close();
    },
    'the plugin bench',
  );

  function keep(outcome: Awaited<ReturnType<typeof claimFile>>): OpenedFile {
    assert.equal(outcome.status, 'claimed');
    // Narrows the type; the assertion above has already failed the test otherwise.
    if (outcome.status !== 'claimed') throw new Error('not claimed');
    opened.push(outcome.file);
    return outcome.file;
  }

  async function exists(target: PluginTarget, table: string): Promise<boolean> {
    return (await columnTypes(target.pool, table)) !== null;
  }

  return {
    get root() {
      return state().fx.root;
    },
    get db() {
      return state().fx.db;
    },
    get pool() {
      return state().fx.pool;
    },
    get inbox() {
      return state().inbox;
    },
    async claim(name, content) {
      const { inbox, staging } = state();
      if (content !== undefined) await writeFile(join(inbox, name), content);
      const claimId = randomUUID();
      return keep(await claimFile(inbox, name, join(staging, `${claimId}-${name}`), { claimId, extension: extensionOf(name) }));
    },
    async reopen(file) {
      return keep(await reopenStaged(file.stagedPath, file.name, { claimId: file.claimId, extension: file.extension }));
    },
    async ingest(file, table, ingestOptions = {}) {
      const target = ingestOptions.target ?? state().fx;
      const fileState = new Map<string, unknown>();
      for (let attempt = 1; attempt <= options.maxAttempts; attempt++) {
        const existedBefore = await exists(target, table);
        const ctx: IngestContext = {
          capabilities: ingestOptions.remote ? { ...target.db.capabilities, arrowStream: false, readsLocalFiles: false } : target.db.capabilities,
          attempt,
          fileState,
          sqlType: (t) => target.db.sqlType(t),
          schema: { createTable: ingestOptions.createTable ?? true },
          logger: options.logger,
        };
        try {
          const rows = await target.pool.transaction(async (conn) => {
            const result = await ingester.append(conn, file, { name: table }, ctx);
            if (result.isErr()) throw new IngestFailure(result.error);
            return result.value.rows;
          });
          return { rows, attempts: attempt };
        } catch (error) {
          if (!isIngestFailure(error)) throw error;
          // Hyper keeps a CREATE TABLE even when the transaction rolls back: the core drops a
          // table the failed attempt created while it is still empty, and so does this.
          if (!existedBefore && (await exists(target, table)) && (await count(target.pool, `"${table}"`)) === 0) {
            await target.pool.query(`DROP TABLE "${table}"`);
          }
          if (error.error.retry && attempt < options.maxAttempts) continue;
          return { error: error.error, attempts: attempt };
        }
      }
      throw new Error('unreachable: the last attempt returns');
    },
  };
}
