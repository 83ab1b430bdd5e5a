/**
 * The crash loop of the exactly-once tests: one watcher child (child.ts) at a time, SIGKILLed at
 * random moments start after start while a producer drops files, then one last child that runs
 * until the inbox and staging are empty and is stopped with SIGTERM. What the table must hold
 * afterwards is each test's own; this is only the loop they share. (Several processes on one
 * inbox, killed in turn, are fleet.ts's `killScenario`.)
 */
import { startWatchChild } from './child.ts';
import { stagedEntries, waitFor } from './drop.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface KillLoop {
  readonly dir: string;
  readonly table: string;
  readonly database: string;
  /** The child's `WatchOptions` (JSON), the same for every start. */
  readonly options: Record<string, unknown>;
  /** How many files the producer drops, `dropFile(0)` to `dropFile(files - 1)`, in order. */
  readonly files: number;
  readonly dropFile: (f: number) => Promise<void>;
  /** After every `pauseEvery`-th file the producer pauses `pauseMs`. */
  readonly pauseEvery: number;
  readonly pauseMs: number;
  /** Kills go on until there were this many and every file was dropped. */
  readonly minKills: number;
  /** Seeds the kills' moments, so that a run can be repeated. */
  readonly seed: number;
  /** What is still waiting in the inbox: the last child runs until it is empty (and staging too). */
  readonly left: () => Promise<readonly string[]>;
}

/** Runs the loop; resolves with the number of kills once the last child has stopped. */
export async function killWhileProducing(o: KillLoop): Promise<number> {
  let produced = 0;
  const producer = (async () => {
    for (let f = 0; f < o.files; f++) {
      await o.dropFile(f);
      produced++;
      if (f % o.pauseEvery === 0) await sleep(o.pauseMs);
    }
  })();
  let kills = 0;
  let seed = o.seed;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  while (kills < o.minKills || produced < o.files) {
    const run = startWatchChild(o.dir, o.table, o.database, o.options);
    // Kill during start-up (recovery, sweep) as well as while running.
    const during = random() < 0.3;
    if (!during) await run.started;
    await sleep(Math.floor(random() * (during ? 400 : 1200)));
    run.child.kill('SIGKILL');
    await run.exited;
    kills++;
  }
  await producer;
  const last = startWatchChild(o.dir, o.table, o.database, o.options);
  await last.started;
  await waitFor(
    async () => (await o.left()).length === 0 && (await stagedEntries(o.dir)).length === 0,
    'inbox and staging to empty',
    120000,
  );
  last.child.kill('SIGTERM');
  await last.exited;
  return kills;
}
