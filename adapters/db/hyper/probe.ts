/**
 * Whether a running hyperd (endpoint) can read the watcher's files at the watcher's paths: a
 * probe file with a random token is written into the folder, and hyperd must read the token back
 * through `external(...)`. A hyperd on another machine, in a container or under a user that
 * cannot open the folder fails the probe, and the files are then streamed to it.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { quoteLiteral } from '../../../src/columns/sql.ts';
import type { Logger } from '../../../src/types.ts';
import type { Sql } from '../postgres-js/pool.ts';

/** `auto`: probe at start; `yes`/`no`: trust the setting. */
export type EndpointReadsFiles = 'auto' | 'yes' | 'no';
export const ENDPOINT_READS_FILES: readonly EndpointReadsFiles[] = ['auto', 'yes', 'no'];

export type ProbeResult = { readonly reads: true } | { readonly reads: false; readonly reason: string };

/** Writes a probe file into `dir`, asks hyperd (through `sql`) to read it, and removes it. */
export async function probeReadsFolder(sql: Sql, dir: string): Promise<ProbeResult> {
  const token = randomUUID();
  const path = join(dir, `.hyperwatch-probe-${token}.csv`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(path, `probe\n${token}\n`);
  } catch (error) {
    return { reads: false, reason: `the probe file cannot be written here (${(error as Error).message})` };
  }
  try {
    const rows = await sql.unsafe<{ probe: string }[]>(
      `SELECT probe FROM external(${quoteLiteral(path)}, COLUMNS => DESCRIPTOR(probe TEXT), FORMAT => 'csv', HEADER => true)`,
    );
    if (rows.length === 1 && rows[0]!.probe === token) return { reads: true };
    return { reads: false, reason: `hyperd read other content at ${path} (another machine's file system?)` };
  } catch (error) {
    return { reads: false, reason: `hyperd cannot read ${path}: ${String((error as Error).message).replace(/\s*\n\s*/g, '; ')}` };
  } finally {
    await rm(path, { force: true });
  }
}

/**
 * `auto` for an endpoint: probes it through a session of its own (closed after) and says in the
 * log what was found. Without a folder to probe (an adapter made outside a watcher), files are streamed.
 */
export async function decideReadsFiles(connect: () => Sql, dir: string | undefined, where: string, logger: Logger): Promise<boolean> {
  if (dir === undefined) {
    logger.debug(`${where}: no folder to probe; files are streamed to it`);
    return false;
  }
  const sql = connect();
  try {
    const result = await probeReadsFolder(sql, dir);
    if (result.reads) logger.info(`${where} reads the claimed files itself (it read a probe file in ${dir})`);
    else
      logger.info(`${where} cannot read the claimed files itself, so they are streamed to it: ${result.reason}`, {
        fix: 'To force either way, set endpointReadsFiles (--endpoint-reads-files) to yes or no.',
      });
    return result.reads;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
