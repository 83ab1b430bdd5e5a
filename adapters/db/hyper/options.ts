/** What the Hyper adapter is given, what it offers beyond a `DbAdapter`, and its defaults. */
import type { DbAdapter, Logger } from '../../../src/types.ts';
import type { EndpointReadsFiles } from './probe.ts';

export interface HyperAdapterOptions {
  /** The `.hyper` file; created when missing. Default `./hyperwatch.hyper`. */
  readonly database?: string;
  /**
   * `host:port` or `user@host:port` of a running hyperd. Without it, an embedded hyperd is started.
   * The password, when the server asks for one, comes from `password` or the environment variable
   * `HYPERWATCH_ENDPOINT_PASSWORD`, never from this string.
   */
  readonly endpoint?: string;
  /** Password for the endpoint's user (default: `HYPERWATCH_ENDPOINT_PASSWORD`). Never logged. */
  readonly password?: string;
  /** The running hyperd (endpoint) can read this machine's files at the watcher's paths (`endpointReadsFiles: 'yes'`). */
  readonly sharedFilesystem?: boolean;
  /**
   * Whether the running hyperd (endpoint) reads the claimed files itself at their paths, instead
   * of having them streamed: `auto` (default) probes it when the first pool opens, with a file
   * written into `probeDir`; `yes` and `no` force either way. The embedded hyperd always does.
   */
  readonly endpointReadsFiles?: EndpointReadsFiles;
  /** The folder the endpoint must read files from (the watcher's staging folder), for the `auto` probe. */
  readonly probeDir?: string;
  /**
   * Endpoint: the folder where each process lists its sessions' cancel keys (the watcher's
   * `.hyperwatch/sessions`), so that the process taking a dead one over can cancel a COPY it left
   * running even while that COPY stalls hyperd. Without it, such sessions are found by a query.
   */
  readonly sessionsDir?: string;
  /** Path to the hyperd binary (default: `HYPERD_PATH`, the npm package, the cache). */
  readonly hyperdPath?: string;
  /**
   * Embedded, when no hyperd is found (and neither `hyperdPath` nor `HYPERD_PATH` is given): fetch
   * the pinned build for this platform from the npm registry into the user cache on first use,
   * checked as `hyperwatch install-hyperd` checks it, with a line on the logger (on stderr without
   * one). Default true; `false`, or the environment variable `HYPERWATCH_NO_FETCH=1`, turn it off
   * (the start then fails with what to do).
   */
  readonly fetchHyperd?: boolean;
  /**
   * Version of the `.hyper` file format for a new database (`CREATE DATABASE ... WITH VERSION`).
   * The server's default (2) is readable by older Tableau releases but has no REAL and no NUMERIC
   * above 18 digits: such columns are then created as DOUBLE PRECISION and TEXT. Version 3 adds
   * 128-bit NUMERIC, version 4 REAL. An existing database keeps its version. Which Tableau
   * releases open which version: README, "Database versions".
   */
  readonly databaseVersion?: number;
  /**
   * Embedded: a hyperd for this adapter alone, instead of the one the process's adapters of the
   * same user share. `hyperwatch export` writes through one: streaming a table from one session
   * of a hyperd into another session of the same hyperd stalls for good once the stream is large
   * (seen with 1M rows: both COPYs wait on each other inside hyperd). Default false.
   */
  readonly isolated?: boolean;
  /** false: a missing `.hyper` file is an error (`NO_SUCH_DATABASE`) instead of being created (default true). */
  readonly create?: boolean;
  /**
   * DATE, TIME, TIMESTAMP and TIMESTAMPTZ values come back as the text hyperd sends
   * (`2018-01-28`, `10:15:00`, `2018-01-28 10:15:00.5`, `2018-01-28 10:15:00+00`, `0044-03-15 BC`)
   * instead of JavaScript Dates, which hold no date without a time nor a time without a zone,
   * keep milliseconds only, and cannot read a BC date at all. Default false.
   */
  readonly datesAsText?: boolean;
  /**
   * The user to connect as. A `.hyper` file opens only for the role that created it, and the
   * embedded hyperd runs as this user. Default, embedded: the role an existing file belongs to
   * (read from the file), else `tableau_internal_user`, the role Tableau's tools run as, so the
   * files made open in them. Default, endpoint: its `user@`, else `hyperwatch`.
   */
  readonly user?: string;
  /**
   * Embedded hyperd: publish where it listens in `<database>.hyperwatch-endpoint.json` while a
   * pool is open, so readers (`hyperwatch query`, psql) go through it (default true).
   */
  readonly announce?: boolean;
  /**
   * Embedded: once nothing has run for this long (ms) and every commit is checkpointed, the
   * sessions detach and close, so other programs can open the file (default 2000; 0: never).
   */
  readonly releaseIdleMs?: number;
  readonly logger?: Logger;
}

export const DEFAULT_DATABASE = './hyperwatch.hyper';
export const DEFAULT_RELEASE_IDLE_MS = 2000;

export interface HyperAdapter extends DbAdapter {
  /** Absolute path of the `.hyper` file. */
  readonly database: string;
  /** The embedded hyperd's pid (undefined for an endpoint or before start). */
  readonly hyperdPid: number | undefined;
  /** The file format version of the `.hyper` file (0–4), once a pool was opened; undefined before, or when hyperd does not say. */
  databaseVersion(): number | undefined;
  /** Makes every commit so far durable in the file (hyperd writes it as the last session detaches it). */
  checkpoint(): Promise<void>;
}
