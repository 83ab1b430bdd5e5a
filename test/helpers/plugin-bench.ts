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
import { type ClaimOutcome, claimFile, type OpenedFile, reopenStaged } from '../../src/protocol/files.ts';
import type { HyperAdapter } from '../../adapters/db/hyper/index.ts';
import type { DbAdapter, DbPool, IngestContext, IngesterPlugin, IngestError, Logger } from '../../src/types.ts';
import { count, type HyperFixture, hyperFixture, LiveFixture, suiteResource } from './env.ts';

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

interface BenchState {
  readonly fx: HyperFixture;
  /** Where claim() writes files before claiming them. */
  readonly inbox: string;
  readonly staging: string;
  /** Claimed files, closed after the suite. */
  readonly opened: OpenedFile[];
}

async function exists(target: PluginTarget, table: string): Promise<boolean> {
  return (await columnTypes(target.pool, table)) !== null;
}

/** The suite's hyperd database (root, adapter, pool for checks), and what loads into it. */
export class PluginBench extends LiveFixture<HyperAdapter> {
  readonly #state: () => BenchState;
  readonly #ingester: IngesterPlugin;
  readonly #options: { readonly maxAttempts: number; readonly logger: Logger };

  constructor(state: () => BenchState, ingester: IngesterPlugin, options: { maxAttempts: number; logger: Logger }) {
    super(() => state().fx);
    this.#state = state;
    this.#ingester = ingester;
    this.#options = options;
  }

  get inbox(): string {
    return this.#state().inbox;
  }

  /** Writes `content` (when given; else the file must be there) into the inbox and claims it. */
  async claim(name: string, content?: string | Uint8Array): Promise<OpenedFile> {
    const { inbox, staging } = this.#state();
    if (content !== undefined) await writeFile(join(inbox, name), content);
    const claimId = randomUUID();
    return this.#keep(await claimFile(inbox, name, join(staging, `${claimId}-${name}`), { claimId, extension: extensionOf(name) }));
  }

  /** Opens the same staged file again (as after a crash), for a second load of the same bytes. */
  async reopen(file: OpenedFile): Promise<OpenedFile> {
    return this.#keep(await reopenStaged(file.stagedPath, file.name, { claimId: file.claimId, extension: file.extension }));
  }

  /** Loads a claimed file into `table`, as the watcher does (src/watcher/attempt.ts); gives up after `maxAttempts`. */
  async ingest(file: OpenedFile, table: string, options: IngestOptions = {}): Promise<Outcome> {
    const target = options.target ?? this.#state().fx;
    const { maxAttempts, logger } = this.#options;
    const fileState = new Map<string, unknown>();
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const existedBefore = await exists(target, table);
      const ctx: IngestContext = {
        capabilities: options.remote ? { ...target.db.capabilities, arrowStream: false, readsLocalFiles: false } : target.db.capabilities,
        attempt,
        fileState,
        sqlType: (t) => target.db.sqlType(t),
        schema: { createTable: options.createTable ?? true },
        logger,
      };
      try {
        const rows = await target.pool.transaction(async (conn) => {
          const result = await this.#ingester.append(conn, file, { name: table }, ctx);
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
        if (error.error.retry && attempt < maxAttempts) continue;
        return { error: error.error, attempts: attempt };
      }
    }
    throw new Error('unreachable: the last attempt returns');
  }

  #keep(outcome: ClaimOutcome): OpenedFile {
    assert.equal(outcome.status, 'claimed');
    // Narrows the type; the assertion above has already failed the test otherwise.
    if (outcome.status !== 'claimed') throw new Error('not claimed');
    this.#state().opened.push(outcome.file);
    return outcome.file;
  }
}

/**
 * A bench for `ingester` in the enclosing `describe` (call this in its body): a hyperd database,
 * an inbox and a staging directory, opened before the tests; the claimed files closed and the
 * database removed after them.
 */
export function usePluginBench(ingester: IngesterPlugin, options: { maxAttempts: number; logger: Logger }): PluginBench {
  const state = suiteResource<BenchState>(
    async () => {
      const fx = await hyperFixture();
      const inbox = join(fx.root, 'in');
      const staging = join(fx.root, 'staging');
      await mkdir(inbox);
      await mkdir(staging);
      return { fx, inbox, staging, opened: [] };
    },
    async ({ fx, opened }) => {
      for (const file of opened) await file.close();
      await fx.close();
    },
    'the plugin bench',
  );
  return new PluginBench(state, ingester, options);
}
