/**
 * A file's record: what the watcher knows about one drop in each state (see states.ts). Steps take
 * a record and return the next one; nothing about a file is kept anywhere else.
 */
import { READY_SUFFIX } from '../constants.ts';
import type { OpenedFile } from './files.ts';
import type { PluginMatch } from '../plugins.ts';
import type { IngestError } from '../types.ts';
import type { FileState } from './states.ts';

/** `X.ready` found in the watched directory. */
export interface ReadyFile {
  readonly state: 'ready';
  readonly readyName: string;
}

/** The sentinel is in staging under `claimId`; its data file is being claimed. */
export interface ClaimingFile {
  readonly state: 'claiming';
  readonly readyName: string;
  readonly dataName: string;
  readonly claimId: string;
}

/** Both files in staging under one claim id; the data file held open. `match`: none → UNKNOWN_EXTENSION. */
export interface ClaimedFile {
  readonly state: 'claimed';
  readonly file: OpenedFile;
  readonly match: PluginMatch | undefined;
}

/** A claimed file inside a transaction, since `startedAt` (epoch ms; for progress reports). */
export interface IngestingFile {
  readonly state: 'ingesting';
  readonly file: OpenedFile;
  readonly match: PluginMatch | undefined;
  readonly startedAt: number;
}

/** Rows and ledger row committed; the staged copy stays until the commit is durable. */
export interface CommittedFile {
  readonly state: 'committed';
  readonly stagedPath: string;
  readonly name: string;
  readonly claimId: string;
  /** The server's epoch before the transaction (see `DbAdapter.epoch`). */
  readonly epoch: number;
  readonly rows: number;
  readonly bytes: number;
  /** Skipped as a duplicate (`skipDuplicateContent`): counted as such, not as ingested. */
  readonly duplicate?: boolean;
  /** Rows left out as bad (`onBadRows: 'skip'`); their file waits in staging beside it. */
  readonly rejected?: number;
  /** `readyWhen: 'marker'`: `stagedPath` is a claimed folder, `name` the folder, of `files` data files. */
  readonly unit?: { readonly files: number };
}

/** Gone from staging: committed and durable. */
export interface SettledFile {
  readonly state: 'settled';
  readonly name: string;
  readonly claimId: string;
}

/** On its way to failed/: where its files are now, and why. */
export interface FailedFile {
  readonly state: 'failed';
  readonly name: string;
  readonly claimId: string;
  readonly extension: string;
  /** The data file (absent for an orphan sentinel). */
  readonly dataPath?: string;
  readonly readyPath: string;
  readonly error: IngestError;
}

/** A sentinel whose data file is not there (yet), since `since` (epoch ms). */
export interface OrphanedFile {
  readonly state: 'orphaned';
  readonly readyName: string;
  readonly since: number;
}

export type FileRecord = ReadyFile | ClaimingFile | ClaimedFile | IngestingFile | CommittedFile | SettledFile | FailedFile | OrphanedFile;

/** The record type of a state. */
export type RecordIn<S extends FileState> = Extract<FileRecord, { state: S }>;

/** A claimed file's record as it fails with `error`. */
export function failedClaim(file: OpenedFile, error: IngestError): FailedFile {
  return {
    state: 'failed',
    name: file.name,
    claimId: file.claimId,
    extension: file.extension,
    dataPath: file.stagedPath,
    readyPath: file.stagedPath + READY_SUFFIX,
    error,
  };
}

/** A claimed file's record once its transaction committed `rows` rows. */
export function committedClaim(file: OpenedFile, rows: number, epoch: number, duplicate = false, rejected?: number): CommittedFile {
  return {
    state: 'committed',
    stagedPath: file.stagedPath,
    name: file.name,
    claimId: file.claimId,
    epoch,
    rows,
    bytes: file.size,
    ...(duplicate ? { duplicate } : {}),
    ...(rejected === undefined ? {} : { rejected }),
  };
}
