/**
 * Replaying files the fuzzer wrote out (its failures, kept as regression fixtures): each dropped
 * alone into its own inbox and table, through the same watcher and the same invariants.
 */
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { type Candidate, checkBatch, type Failure, type Outcome } from './check.ts';
import type { Format } from './mutate.ts';
import { openEnv } from './run.ts';

/** What the fuzzer wrote beside a failure's file (`<file>.json`), and what its refusal is now. */
export interface FixtureNote {
  readonly invariant: string;
  readonly detail: string;
  readonly how: string;
  readonly format: Format;
  /** The code the file is refused with once fixed (checked by the regression test). */
  readonly refusedAs?: string;
}

export interface Replayed {
  readonly name: string;
  readonly note: FixtureNote;
  readonly outcome: Outcome | undefined;
  readonly failures: readonly Failure[];
}

/** Every fixture of `dir` (a file with its `.json`), replayed. */
export async function replayDir(dir: string, out: string): Promise<Replayed[]> {
  const all = new Set(await readdir(dir));
  // A fixture is a file with its note beside it (`<file>.json`); the notes themselves are not fixtures.
  const names = [...all].filter((n) => all.has(`${n}.json`) && extname(n) !== '').sort();
  const env = await openEnv(out, 30_000);
  const results: Replayed[] = [];
  try {
    for (const [k, name] of names.entries()) {
      const note = JSON.parse(await readFile(join(dir, `${name}.json`), 'utf8')) as FixtureNote;
      const candidate: Candidate = { name, format: note.format, bytes: new Uint8Array(await readFile(join(dir, name))), how: note.how };
      const { outcomes, failures } = await checkBatch(env.check, join(out, 'inbox', `r${k}`), `replay_${k}`, [candidate]);
      results.push({ name, note, outcome: outcomes[0], failures });
    }
  } finally {
    await env.close();
  }
  return results;
}
