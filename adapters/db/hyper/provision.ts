/**
 * hyperd on first use. npm 11 runs no install script of a dependency unless the user approves it,
 * so after `npm install hyperwatch` the postinstall fetch may never have run: the embedded hyperd
 * is then fetched into the user cache when it is first needed, with the same checks, and said so
 * (a library that downloads 80 MB must not do it unseen). `HYPERD_PATH` (or `hyperdPath`) still
 * wins, and is never fetched around; `fetchHyperd: false` or `HYPERWATCH_NO_FETCH=1` turn it off.
 */
import process from 'node:process';
import { silentLogger } from '../../../src/log.ts';
import type { Logger } from '../../../src/types.ts';
import { fetchHyperd } from './fetch.ts';
import { locateHyperd } from './locate.ts';
import { isHyperdPlatform, runningPlatform } from './platforms.ts';

/** Set (to anything but `0` or `false`): never fetch hyperd on first use, whatever the code asks. */
export const NO_FETCH_ENV = 'HYPERWATCH_NO_FETCH';

/** The error code of a start without a hyperd to start. */
export const HYPERD_NOT_FOUND = 'HYPERD_NOT_FOUND';

function notFound(message: string): Error {
  return Object.assign(new Error(message), { code: HYPERD_NOT_FOUND });
}

/** Why fetching on first use is off, or undefined when it is on. */
export function fetchOff(option: boolean | undefined): string | undefined {
  const env = process.env[NO_FETCH_ENV];
  if (env !== undefined && env !== '' && env !== '0' && env.toLowerCase() !== 'false') return `${NO_FETCH_ENV}=${env} is set`;
  return option === false ? 'the adapter was made with fetchHyperd: false' : undefined;
}

/**
 * Where the fetch's progress lines go: the logger, or stderr when it is the silent one (what a
 * library caller gets without a logger), since a fetch of this size must be seen.
 */
export function fetchReporter(logger: Logger): (line: string) => void {
  if (logger === silentLogger) return (line) => void process.stderr.write(`hyperwatch: ${line}\n`);
  return (line) => logger.info(line);
}

/** The hyperd to start: found (see locate.ts), else fetched for the running platform. */
export async function hyperdForFirstUse(
  explicit: string | undefined,
  options: { readonly fetch?: boolean; readonly logger: Logger },
): Promise<string> {
  const located = locateHyperd(explicit);
  if (located.ok) return located.path;
  const platform = runningPlatform();
  if (located.explicit || !isHyperdPlatform(platform)) throw notFound(located.message);
  const off = fetchOff(options.fetch);
  if (off) throw notFound(`${located.message} (hyperwatch fetches it on first use, but ${off}.)`);
  const { path } = await fetchHyperd({ platform, report: fetchReporter(options.logger) });
  return path;
}
