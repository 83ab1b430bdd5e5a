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
   * Version of the `.hyper` file format for a new database (`CREATE DATABASE ... WITH VERSION`).
   * The server's default (2) is readable by older Tableau releases but has no REAL and no NUMERIC
   * above 18 digits: such columns are then created as DOUBLE PRECISION and TEXT. Version 3 adds
   * 128-bit NUMERIC, version 4 REAL. An existing database keeps its version.
   */
  readonly databaseVersion?: number;
  /**
   * The user to connect as (default `hyperwatch`, or the endpoint's `user@`). The embedded hyperd
   * runs as this user too, and a `.hyper` file opens only for the role that created it: use
   * `tableau_internal_user` for files made by Tableau's Hyper API (and to make files it opens).
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
}
