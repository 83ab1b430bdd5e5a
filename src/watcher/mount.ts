/**
 * What the protocol needs from the filesystem: a claim is a rename from the inbox into the
 * staging folder, atomic only within one filesystem. A staging folder on another mount (a bind
 * mount, a separate volume over `.hyperwatch`) would make each claim a copy and a delete, which
 * two processes can both win: refused before anything is claimed.
 */
import { stat } from 'node:fs/promises';
import type { WatchEnv } from './env.ts';

export async function checkSameMount(env: WatchEnv): Promise<void> {
  const [inbox, staging] = await Promise.all([stat(env.dir), stat(env.stagingRoot)]);
  const problem = otherMountProblem(env.dir, env.stagingRoot, inbox.dev, staging.dev);
  if (problem) throw Object.assign(new Error(problem), { code: 'STAGING_OTHER_MOUNT' });
}

/** The refusal for a staging folder on device `stagingDev` under an inbox on `inboxDev`; undefined when they match. */
export function otherMountProblem(
  dir: string,
  stagingRoot: string,
  inboxDev: number | bigint,
  stagingDev: number | bigint,
): string | undefined {
  if (inboxDev === stagingDev) return undefined;
  return (
    `${stagingRoot} is on another filesystem than ${dir} (device ${stagingDev} vs ${inboxDev}): claiming a file must be an ` +
    `atomic rename within one filesystem. Remove the mount over ${stagingRoot} so that it lives on the inbox's own filesystem.`
  );
}
