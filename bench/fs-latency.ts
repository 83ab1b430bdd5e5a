/**
 * Event latency of each FS adapter available in this runtime: time from the rename of a file
 * into the watched directory to the adapter's callback naming it. Runs unchanged on all three:
 *
 *   node --import tsx bench/fs-latency.ts [--samples 50] [--adapters node-fs,parcel,poll,deno]
 *   deno run -A bench/fs-latency.ts
 *   bun bench/fs-latency.ts
 *
 * Prints one Markdown table row per adapter (p50, p95, max in ms; lost = samples not reported
 * within 5 s), and the same as JSON lines with `--json`.
 */
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { denoFsAdapter, isDenoRuntime } from '../adapters/fs/deno/index.ts';
import { nodeFsAdapter } from '../adapters/fs/node/index.ts';
import { parcelFsAdapter } from '../adapters/fs/parcel/index.ts';
import { pollFsAdapter } from '../adapters/fs/poll/index.ts';
import type { FsAdapter } from '../src/types.ts';

const POLL_INTERVAL_MS = 100;
const TIMEOUT_MS = 5000;

function runtime(): string {
  const deno = (globalThis as { Deno?: { version?: { deno?: string } } }).Deno;
  if (deno?.version?.deno) return `deno ${deno.version.deno}`;
  const bun = (process.versions as Record<string, string | undefined>).bun;
  if (bun) return `bun ${bun}`;
  return `node ${process.versions.node}`;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const factories: Record<string, () => FsAdapter> = {
  'node-fs': () => nodeFsAdapter(),
  parcel: () => parcelFsAdapter(),
  poll: () => pollFsAdapter({ intervalMs: POLL_INTERVAL_MS }),
  ...(isDenoRuntime() ? { deno: () => denoFsAdapter() } : {}),
};

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Result {
  readonly runtime: string;
  readonly adapter: string;
  readonly samples: number;
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
  readonly lost: number;
  readonly error?: string;
}

async function measure(name: string, make: () => FsAdapter, samples: number): Promise<Result> {
  const root = await mkdtemp(join(tmpdir(), 'hyperwatch-fs-latency-'));
  const watched = join(root, 'inbox');
  const outside = join(root, 'outside');
  await mkdir(watched);
  await mkdir(outside);
  const waiting = new Map<string, (at: number) => void>();
  const latencies: number[] = [];
  let lost = 0;
  try {
    const adapter = make();
    const subscription = await adapter.subscribe(
      watched,
      (names) => {
        const at = performance.now();
        for (const n of names) waiting.get(n)?.(at);
      },
      () => {},
    );
    try {
      await sleep(100); // let the watch settle (parcel starts its backend thread)
      for (let i = 0; i < samples; i++) {
        const file = `f-${i}.csv`;
        await writeFile(join(outside, file), 'id\n1\n');
        // For polling, start at a random phase of the interval, as a real drop would.
        await sleep(name === 'poll' ? Math.random() * POLL_INTERVAL_MS : 5);
        const seen = new Promise<number | undefined>((resolve) => {
          const timer = setTimeout(() => resolve(undefined), TIMEOUT_MS);
          waiting.set(file, (at) => {
            clearTimeout(timer);
            resolve(at);
          });
        });
        const start = performance.now();
        await rename(join(outside, file), join(watched, file));
        const at = await seen;
        waiting.delete(file);
        if (at === undefined) lost++;
        else latencies.push(at - start);
      }
    } finally {
      await subscription.close();
    }
  } catch (error) {
    return { runtime: runtime(), adapter: name, samples, p50: NaN, p95: NaN, max: NaN, lost: samples, error: String(error) };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  latencies.sort((a, b) => a - b);
  return {
    runtime: runtime(),
    adapter: name,
    samples,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    max: latencies.at(-1) ?? Number.NaN,
    lost,
  };
}

const samples = Number(arg('samples') ?? 50);
const wanted = (arg('adapters') ?? Object.keys(factories).join(',')).split(',').filter((n) => n in factories);
const json = process.argv.includes('--json');
const ms = (v: number) => (Number.isNaN(v) ? '—' : v.toFixed(2));

if (!json) {
  console.log('| runtime | adapter | samples | p50 ms | p95 ms | max ms | lost |');
  console.log('|---|---|---|---|---|---|---|');
}
for (const name of wanted) {
  const r = await measure(name, factories[name]!, samples);
  if (json) console.log(JSON.stringify(r));
  else
    console.log(
      `| ${r.runtime} | ${r.adapter}${r.adapter === 'poll' ? ` (${POLL_INTERVAL_MS} ms)` : ''} | ${r.samples} ` +
        `| ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.max)} | ${r.lost}${r.error ? ` (${r.error})` : ''} |`,
    );
}
