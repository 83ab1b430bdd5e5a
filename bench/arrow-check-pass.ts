/**
 * The check an Arrow file passes before hyperd reads it itself, on the same 1M-row files,
 * interleaved: the full pass of the streaming path (every body read whole: what the server read
 * ran before), `check()` after opening (only the buffers the value checks look at), and the same
 * checks run while opening (`openIpc(file, { checkValues: true })`, as the ingester does where
 * hyperd may read the file). Wall ms median (min–max), CPU ms median, MB read.
 *
 *   node --import tsx bench/arrow-check-pass.ts [rounds=10]
 */
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordBatchFileWriter } from 'apache-arrow';
import { createHyperAdapter } from '../adapters/db/hyper/index.ts';
import { type IpcSource, openIpc } from '../plugins/arrow/source.ts';
import { claimFile } from '../src/protocol/files.ts';
import { silentLogger } from '../src/log.ts';
import type { ClaimedFile } from '../src/types.ts';
import { arrowRows } from './lib/arrow-rows.ts';

const ROUNDS = Number(process.argv[2] ?? 10);
const root = await mkdtemp(join(tmpdir(), 'hw-arrow-check-'));
try {
  // hyperd's own COPY TO (FORMAT arrowstream): about 100 record batches for 1M rows.
  const db = createHyperAdapter({ database: join(root, 'x.hyper'), logger: silentLogger });
  const pool = await db.openPool({ maxConnections: 1 });
  const hyper = join(root, 'hyper.arrows');
  await pool.query(
    `CREATE TABLE s AS SELECT i::BIGINT AS id, (TIMESTAMP '2023-11-14 22:13:20' + i * INTERVAL '1 second') AS ts, 'name-' ` +
      `|| (i % 1000) AS name, i * 0.25::DOUBLE PRECISION AS amount FROM generate_series(0, 999999) AS g(i)`,
  );
  await pool.query(`COPY (SELECT * FROM s) TO '${hyper}' WITH (FORMAT arrowstream)`);
  await pool.close();
  await db.close();
  // apache-arrow, one record batch.
  const table = arrowRows(1_000_000);
  const one = join(root, 'one.arrow');
  await writeFile(one, await new RecordBatchFileWriter().writeAll(table).toUint8Array());

  const consume = async (s: IpcSource) => {
    for await (const chunk of s.streamBytes()) void chunk;
  };
  const variants: { name: string; run: (f: ClaimedFile) => Promise<void> }[] = [
    { name: 'full pass, every body read (before)', run: async (f) => consume(await openIpc(f)) },
    { name: 'open, then check()', run: async (f) => (await openIpc(f)).check() },
    { name: 'checked while opening', run: async (f) => (await openIpc(f, { checkValues: true })).check() },
  ];
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  let n = 0;
  console.log('| file | check | wall ms | CPU ms | MB read |\n|---|---|---|---|---|');
  for (const [label, path] of [
    ['apache-arrow file, 1 batch', one],
    ["hyperd's arrowstream, ~100 batches", hyper],
  ] as const) {
    const wall = variants.map(() => [] as number[]);
    const cpu = variants.map(() => [] as number[]);
    const bytes = variants.map(() => 0);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [k, variant] of variants.entries()) {
        const name = `f${n++}.arrow`;
        await copyFile(path, join(root, name));
        const claimed = claimFile(root, name, join(root, `staged-${name}`), { claimId: name, extension: '.arrow' });
        if (claimed.status !== 'claimed') throw new Error(`claim: ${claimed.status}`);
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        await variant.run(claimed.file);
        wall[k]!.push(performance.now() - t0);
        const used = process.cpuUsage(c0);
        cpu[k]!.push((used.user + used.system) / 1000);
        bytes[k] = claimed.file.bytesRead;
        claimed.file.close();
        await rm(join(root, `staged-${name}`));
      }
    }
    for (const [k, variant] of variants.entries()) {
      const w = wall[k]!;
      console.log(
        `| ${label} | ${variant.name} | ${median(w).toFixed(1)} (${Math.min(...w).toFixed(1)}–${Math.max(...w).toFixed(1)}) ` +
          `| ${median(cpu[k]!).toFixed(1)} | ${(bytes[k]! / 1e6).toFixed(1)} |`,
      );
    }
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
