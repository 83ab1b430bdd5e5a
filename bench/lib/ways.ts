/**
 * Ways of loading one file timed side by side on one server: each way once per round, every other
 * round in reverse order, each on a fresh table checked by count; then each way's milliseconds and
 * the per-round ratio of a baseline's time to each other way's (1.0 = as fast as the baseline).
 * The only comparison that holds on a shared, noisy machine (bench/csv-source-ways.ts,
 * bench/csv-iso-dates.ts).
 */
import type { Sql } from 'postgres';
import { summarize } from './measure.ts';
import { countRows, dropTable, freshTable, type Server, withSession } from './server.ts';

/** How one way loads the fresh table `table` (its SQL name quoted); `prepare` runs before the clock starts. */
export interface Way {
  readonly load: (sql: Sql, table: string) => Promise<unknown>;
  readonly prepare?: (sql: Sql, table: string) => Promise<unknown>;
}

/** Milliseconds of each way in each round, in round order. */
export async function timeWays(
  server: Server,
  database: string,
  ways: Readonly<Record<string, Way>>,
  options: { readonly rounds: number; readonly rows: number; readonly prefix: string; readonly afterRound?: () => Promise<void> },
): Promise<Record<string, number[]>> {
  const names = Object.keys(ways);
  const ms: Record<string, number[]> = Object.fromEntries(names.map((w) => [w, []]));
  for (let round = 0; round < options.rounds; round++) {
    // Every other round in reverse order, so no way always runs first (on a cold cache) or last.
    for (const name of round % 2 ? [...names].reverse() : names) {
      const way = ways[name]!;
      const table = `${options.prefix}_${name.replace(/\W/g, '_')}_${round}`;
      const took = await withSession(server, database, async (sql) => {
        await freshTable(sql, table);
        await way.prepare?.(sql, table);
        const start = performance.now();
        await way.load(sql, table);
        const took = performance.now() - start;
        const n = await countRows(sql, table);
        await dropTable(sql, table);
        if (n !== options.rows) throw new Error(`${name}: ${n} rows, expected ${options.rows}`);
        return took;
      });
      ms[name]!.push(Math.round(took));
    }
    await options.afterRound?.();
  }
  return ms;
}

/** Each series' median and spread, then the per-round ratio of `baseline`'s time to each of `compared`'s. */
export function printWays(ms: Readonly<Record<string, readonly number[]>>, baseline: string, compared: readonly string[]): void {
  const width = Math.max(...Object.keys(ms).map((k) => k.length)) + 2;
  for (const [way, values] of Object.entries(ms)) {
    const s = summarize(values);
    console.log(`${way.padEnd(width)} median ${s.median} ms (min ${s.min}, max ${s.max}): ${values.join(' ')}`);
  }
  for (const way of compared) {
    const s = summarize(ms[way]!.map((t, i) => ms[baseline]![i]! / t));
    console.log(
      `${baseline} / ${way.padEnd(width)} per round: median ${s.median.toFixed(2)} (min ${s.min.toFixed(2)}, max ${s.max.toFixed(2)})`,
    );
  }
}
