/**
 * One hyperd that several `hyperwatch watch` processes share by `--endpoint`, started as Tableau's
 * Hyper API starts it (through the adapter's own `Hyperd`, with the Tableau role), its log kept
 * for `hyperdStanding`, and an adapter on its `shared.hyper` for the test's own checks. For the
 * tests of several writers on one `.hyper` file (multi-process-hyper, mode-kill-hyper).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createHyperAdapter, TABLEAU_ROLE } from '../../adapters/db/hyper/index.ts';
import { Hyperd } from '../../adapters/db/hyper/hyperd.ts';
import { locateHyperd } from '../../adapters/db/hyper/locate.ts';
import { silentLogger } from '../../src/log.ts';
import { removeDir, tempDir } from './env.ts';

export interface SharedHyperd {
  /** A temp folder for the test's inboxes; `shared.hyper` and (by default) the log are in it. */
  readonly root: string;
  /** `<Tableau role>@host:port`, as every process names it. */
  readonly endpoint: string;
  readonly database: string;
  /** An adapter on `database` through `endpoint`; `stop` closes it (close its pools first). */
  readonly check: ReturnType<typeof createHyperAdapter>;
  readonly logDir: string;
  /** Closes `check`, stops hyperd and removes `root`. */
  stop(): Promise<void>;
}

/** Starts the hyperd in a new temp folder named `prefix...`; `logDir` keeps its log elsewhere. */
export async function startSharedHyperd(prefix: string, logDir?: string): Promise<SharedHyperd> {
  const located = locateHyperd();
  if (!located.ok) throw new Error(located.message);
  const root = await tempDir(prefix);
  const log = logDir ?? join(root, 'hyperd-log');
  await mkdir(log, { recursive: true });
  const hyperd = new Hyperd({ binary: located.path, logger: silentLogger, logDir: log });
  let host: string;
  let port: number;
  try {
    ({ host, port } = await hyperd.endpoint());
  } catch (error) {
    // Nothing left behind a hyperd that did not start.
    await hyperd.stop().catch(() => {});
    await removeDir(root);
    throw error;
  }
  // Started as Tableau's Hyper API starts it (the role of the files it makes), so every
  // process names that user in its endpoint, as a user of such a hyperd does.
  const endpoint = `${TABLEAU_ROLE}@${host}:${port}`;
  const database = join(root, 'shared.hyper');
  const check = createHyperAdapter({ endpoint, database });
  return {
    root,
    endpoint,
    database,
    check,
    logDir: log,
    async stop() {
      await check.close();
      await hyperd.stop();
      await removeDir(root);
    },
  };
}
