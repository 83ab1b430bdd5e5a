/**
 * What the protocol needs from the filesystem: a claim is a rename from the inbox into the
 * staging folder, atomic only within one filesystem. A staging folder on another mount (a bind
 * mount, a separate volume over `.hyperwatch`) would make each claim a copy and a delete, which
 * two processes can both win: refused before anything is claimed.
 */
import { stat } from 'node:fs/promises';
import type { WatchContext } from './context.ts';

export async function checkSameMount(ctx: WatchContext): Promise<void> {
  const [inbox, staging] = await Promise.all([stat(ctx.dir), stat(ctx.lease.stagingRoot)]);
  if (inbox.dev !== staging.dev) {
    throw Object.assign(
      new Error(
      `${ctx.lease.stagingRoot} is on another filesystem than ${ctx.dir} (device ${staging.dev} vs ${inbox.dev}): claiming a file must be an atomic rename within one filesystem. Remove the mount over ${ctx.lease.stagingRoot} so that it lives on the inbox's own filesystem.`,
      ),
      { code: 'STAGING_OTHER_MOUNT' },
    );
  }
}
