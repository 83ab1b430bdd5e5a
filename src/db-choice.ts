/**
 * Which database a watcher, query or history command uses: the embedded Hyper (default), a running
 * hyperd (`endpoint`), or PostgreSQL (`url`, else `DATABASE_URL`). Shared by the CLI flags and the
 * serve config, so both reject the same mixtures the same way.
 */
import process from 'node:process';
import { createHyperAdapter } from '../adapters/db/hyper/index.ts';
import { createPostgresAdapter } from '../adapters/db/postgres/index.ts';
import type { DbAdapter, Logger } from './types.ts';

export const ADAPTERS = ['hyper', 'postgres'] as const;
export type AdapterName = (typeof ADAPTERS)[number];

export interface DbChoice {
  readonly adapter?: AdapterName | string;
  readonly database?: string;
  readonly endpoint?: string;
  readonly url?: string;
}

/** A problem with a choice: the setting it concerns (`url`, `database`...), what is wrong, the fix. */
export interface DbChoiceProblem {
  readonly field: 'adapter' | 'database' | 'endpoint' | 'url';
  readonly problem: string;
  readonly fix: string;
}

/**
 * Everything wrong with `choice`; empty when it can be opened. `env` supplies DATABASE_URL; `flags`
 * names the settings as the CLI's flags (`--url`) in the fixes.
 */
export function checkDbChoice(choice: DbChoice, env: Record<string, string | undefined> = process.env, flags = false): DbChoiceProblem[] {
  const n = (field: string) => (flags ? `--${field}` : field);
  const adapter = choice.adapter ?? 'hyper';
  if (!(ADAPTERS as readonly string[]).includes(adapter)) {
    return [{ field: 'adapter', problem: `is ${JSON.stringify(adapter)}, not a known adapter`, fix: `Use ${n('adapter')} hyper or ${n('adapter')} postgres.` }];
  }
  const problems: DbChoiceProblem[] = [];
  if (adapter === 'postgres') {
    for (const field of ['database', 'endpoint'] as const) {
      if (choice[field] !== undefined) problems.push({ field, problem: 'applies to the hyper adapter only', fix: `Remove ${n(field)}; give the PostgreSQL server as ${n('url')}.` });
    }
    if (choice.url === undefined && !env.DATABASE_URL) {
      problems.push({ field: 'url', problem: 'is missing (and DATABASE_URL is not set)', fix: `Give ${n('url')} postgres://user:password@host:5432/db, or set DATABASE_URL.` });
    }
  } else if (choice.url !== undefined) {
    problems.push({ field: 'url', problem: 'applies to the postgres adapter only', fix: `Add ${n('adapter')} postgres, or remove ${n('url')} (Hyper uses ${n('database')} or ${n('endpoint')}).` });
  }
  return problems;
}

/** Builds the adapter for a choice that `checkDbChoice` accepted. The caller closes it. */
export function createDbAdapter(choice: DbChoice, logger?: Logger): DbAdapter {
  if (choice.adapter === 'postgres') return createPostgresAdapter({ ...(choice.url !== undefined ? { url: choice.url } : {}), ...(logger ? { logger } : {}) });
  return createHyperAdapter({ database: choice.database, endpoint: choice.endpoint, ...(logger ? { logger } : {}) });
}
