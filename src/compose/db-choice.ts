/**
 * Which database a watcher, query or history command uses, as settings (`DbChoice`), and
 * everything wrong with them (`checkDbChoice`) worded for the API, the serve config or the CLI's
 * flags alike. Building the adapter from a checked choice is db-adapters.ts. Part of the
 * composition root (src/compose.ts).
 */
import process from 'node:process';
import { databaseVersionProblem, ENDPOINT_READS_FILES, type EndpointReadsFiles } from '../../adapters/db/hyper/index.ts';

/*
 * Which database a watcher, query or history command uses: the embedded Hyper (default), a running
 * hyperd (`endpoint`), or PostgreSQL (`url`, else `DATABASE_URL`). Shared by the CLI flags, the
 * serve config and `WatchOptions`, so all reject the same mixtures the same way.
 */
export const ADAPTERS = ['hyper', 'postgres'] as const;
export type AdapterName = (typeof ADAPTERS)[number];

export interface DbChoice {
  readonly adapter?: AdapterName | string;
  readonly database?: string;
  readonly endpoint?: string;
  /** Whether the endpoint reads the claimed files itself: `auto` (probe at start), `yes`, `no`. */
  readonly endpointReadsFiles?: EndpointReadsFiles | string;
  readonly url?: string;
  /** Hyper: idle this long after a checkpoint, the watcher lets go of the `.hyper` file (0: never). */
  readonly releaseIdleMs?: number;
  /** The watched folder: the `auto` probe checks that the endpoint can read its staging folder. */
  readonly dir?: string;
  /** Hyper: the file format version of a new `.hyper` file, 0–4 (default: the server's, 2). */
  readonly databaseVersion?: number;
}

/** A problem with a choice: the setting it concerns (`url`, `database`...), what is wrong, the fix. */
export interface DbChoiceProblem {
  readonly field: 'adapter' | 'database' | 'endpoint' | 'endpointReadsFiles' | 'url' | 'releaseIdleMs' | 'databaseVersion';
  readonly problem: string;
  readonly fix: string;
}

/**
 * Everything wrong with `choice`; empty when it can be opened. `env` supplies DATABASE_URL; `flags`
 * names the settings as the CLI's flags (`--url`) in the fixes.
 */
export function checkDbChoice(choice: DbChoice, env: Record<string, string | undefined> = process.env, flags = false): DbChoiceProblem[] {
  const n = (field: string) => (flags ? flagName(field) : field);
  const adapter = choice.adapter ?? 'hyper';
  if (!(ADAPTERS as readonly string[]).includes(adapter)) {
    return [
      {
        field: 'adapter',
        problem: `is ${JSON.stringify(adapter)}, not a known adapter`,
        fix: `Use ${n('adapter')} hyper or ${n('adapter')} postgres.`,
      },
    ];
  }
  const problems: DbChoiceProblem[] = [];
  const reads = choice.endpointReadsFiles;
  if (reads !== undefined && !(ENDPOINT_READS_FILES as readonly string[]).includes(reads)) {
    problems.push({
      field: 'endpointReadsFiles',
      problem: `is ${JSON.stringify(reads)}`,
      fix: `Use ${n('endpointReadsFiles')} auto, yes or no.`,
    });
  }
  if (adapter === 'postgres') {
    for (const field of ['database', 'endpoint', 'endpointReadsFiles', 'releaseIdleMs', 'databaseVersion'] as const) {
      if (choice[field] !== undefined)
        problems.push({
          field,
          problem: 'applies to the hyper adapter only',
          fix: `Remove ${n(field)}; give the PostgreSQL server as ${n('url')}.`,
        });
    }
    if (choice.url === undefined && !env.DATABASE_URL) {
      problems.push({
        field: 'url',
        problem: 'is missing (and DATABASE_URL is not set)',
        fix: `Give ${n('url')} postgres://user:password@host:5432/db, or set DATABASE_URL.`,
      });
    }
  } else if (choice.url !== undefined) {
    problems.push({
      field: 'url',
      problem: 'applies to the postgres adapter only',
      fix: `Add ${n('adapter')} postgres, or remove ${n('url')} (Hyper uses ${n('database')} or ${n('endpoint')}).`,
    });
  }
  if (choice.releaseIdleMs !== undefined && !(Number.isInteger(choice.releaseIdleMs) && choice.releaseIdleMs >= 0)) {
    problems.push({
      field: 'releaseIdleMs',
      problem: `is ${JSON.stringify(choice.releaseIdleMs)}, not a whole number of milliseconds`,
      fix: `Use ${n('releaseIdleMs')} 2000 (or 0 to keep the file).`,
    });
  }
  const versionProblem =
    choice.databaseVersion === undefined || adapter === 'postgres' ? undefined : databaseVersionProblem(choice.databaseVersion);
  if (versionProblem)
    problems.push({
      field: 'databaseVersion',
      problem: versionProblem,
      fix: `Use ${n('databaseVersion')} 2 (opens in Tableau 2020.4.15 / 2022.1.2 and later; README: Options, databaseVersion).`,
    });
  return problems;
}

/** A setting's CLI flag: `endpointReadsFiles` → `--endpoint-reads-files`. */
export function flagName(field: string): string {
  return `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}
