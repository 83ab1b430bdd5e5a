/**
 * A real `hyperwatch serve` process for the tests of serve (test/src/serve/serve-*.test.ts),
 * started on a config written to `<root>/hyperwatch.json`, and its JSON log lines.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from './drop.ts';
import { cli, jsonLogLines } from './proc.ts';

export interface LogLine {
  readonly message: string;
  readonly url?: string;
  readonly tokenFile?: string;
}

/** Starts `serve` on `config` (written to `<root>/hyperwatch.json`), resolving once it serves. */
export async function startServe(
  root: string,
  config: unknown,
  env: Record<string, string>,
): Promise<{ serve: ReturnType<typeof cli>; api: string; log: () => LogLine[]; stderr: () => string }> {
  await writeFile(join(root, 'hyperwatch.json'), JSON.stringify(config, null, 2));
  const serve = cli(['serve', '--config', join(root, 'hyperwatch.json'), '--log-format', 'json'], { env });
  let stderr = '';
  serve.child.stderr!.on('data', (d: string) => (stderr += d));
  const log = () => jsonLogLines<LogLine>(stderr);
  await Promise.race([
    waitFor(() => log().some((l) => l.message === 'serving'), 'serve to start', 60000),
    serve.done.then((run) => assert.fail(`serve exited ${run.code}: ${run.stderr}`)),
  ]);
  return { serve, api: log().find((l) => l.message === 'listening')!.url!, log, stderr: () => stderr };
}

export async function stopServe(serve: ReturnType<typeof cli> | undefined): Promise<void> {
  if (!serve || serve.child.exitCode !== null) return;
  serve.child.kill('SIGTERM');
  await serve.done;
}
