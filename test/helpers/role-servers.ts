/**
 * Two standalone hyperds for the tests of the files' roles, open while a suite's tests run: one
 * as Tableau's Hyper API (and hyperdb-mcp) starts it, one of the role earlier hyperwatch
 * releases used. `on` opens a database on either and lets go of the file afterwards, as Tableau
 * would, so that the next step may open it elsewhere.
 */
import postgres from 'postgres';
import { LEGACY_ROLE, TABLEAU_ROLE } from '../../adapters/db/hyper/index.ts';
import { suiteResource } from './env.ts';
import { type StandaloneHyperd, startStandaloneHyperd } from './standalone-hyperd.ts';

export type RoleServer = 'tableau' | 'legacy';

export interface RoleServers {
  readonly tableau: () => StandaloneHyperd;
  readonly legacy: () => StandaloneHyperd;
  on<T>(server: RoleServer, database: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T>;
}

export function useRoleServers(logDir: () => string): RoleServers {
  const tableau = suiteResource(
    () => startStandaloneHyperd({ user: TABLEAU_ROLE, logDir: logDir() }),
    (s) => s.stop(),
    "Tableau's hyperd",
  );
  const legacy = suiteResource(
    () => startStandaloneHyperd({ user: LEGACY_ROLE, logDir: logDir() }),
    (s) => s.stop(),
    'the old role',
  );
  async function on<T>(server: RoleServer, database: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
    const [port, user] = server === 'tableau' ? [tableau().port, TABLEAU_ROLE] : [legacy().port, LEGACY_ROLE];
    const sql = postgres({ host: '127.0.0.1', port, user, database, fetch_types: false, max: 1, onnotice: () => {} });
    try {
      return await fn(sql);
    } finally {
      if (database !== '') await sql.unsafe(`DETACH DATABASE "${database}"`).catch(() => {});
      await sql.end();
    }
  }
  return { tableau, legacy, on };
}
