/**
 * Arrow files hyperd reads itself: hyperwatch's Arrow ingester (checks every message, then
 * `COPY ... FROM 'path'`) against hyperd's own `COPY t FROM 'path' WITH (FORMAT arrowfile|arrowstream)`
 * of the very same file, and against the same file streamed (`COPY ... FROM STDIN`, as before),
 * on the same embedded hyperd, fresh table each run, interleaved, median.
 *
 *   node --import tsx bench/arrow-server-read.ts [rows=1000000] [runs=3]
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Float64,
  Int64,
  RecordBatchFileWriter,
  RecordBatchStreamWriter,
  Table,
  TimestampMicrosecond,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { createHyperAdapter } from '../adapters/db/hyper/index.ts';
import { arrowIngester } from '../plugins/arrow/index.ts';
import { IngestFailure } from '../src/errors.ts';
import { claimFile } from '../src/protocol/files.ts';
import { silentLogger } from '../src/log.ts';
import type { IngestContext } from '../src/types.ts';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const RUNS = Number(process.argv[3] ?? 3);

function table(rows: number, batches: number): Table {
  const per = Math.ceil(rows / batches);
  const parts: Table[] = [];
  for (let start = 0; start < rows; start += per) {
    const n = Math.min(per, rows - start);
    const ids = Array.from({ length: n }, (_, i) => BigInt(start + i));
    const ts = Array.from({ length: n }, (_, i) => 1_700_000_000_000 + (start + i) * 1000);
    parts.push(
      new Table({
        id: vectorFromArray(ids, new Int64()),
        ts: vectorFromArray(ts, new TimestampMicrosecond()),
        name: vectorFromArray(
          ids.map((i) => `name-${i % 1000n}`),
          new Utf8(),
        ),
        amount: vectorFromArray(
          ids.map((i) => Number(i) * 0.25),
          new Float64(),
        ),
      }),
    );
  }
  return parts.reduce((a, b) => a.concat(b));
}

async function write(path: string, t: Table, format: 'file' | 'stream'): Promise<void> {
  const writer = format === 'file' ? new RecordBatchFileWriter() : new RecordBatchStreamWriter();
  await writeFile(path, await writer.writeAll(t).toUint8Array());
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const root = await mkdtemp(join(tmpdir(), 'hw-arrow-bench-'));
const db = createHyperAdapter({ database: join(root, 'bench.hyper'), logger: silentLogger });
const pool = await db.openPool({ maxConnections: 1 });
const DDL = '(id BIGINT, ts TIMESTAMP, name TEXT, amount DOUBLE PRECISION)';
try {
  const lines: string[] = [];
  for (const batches of [1, 16]) {
    const t = table(ROWS, batches);
    for (const format of ['file', 'stream'] as const) {
      const source = join(root, `src-${batches}-${format}.arrow`);
      await write(source, t, format);
      const own: number[] = [];
      const ours: number[] = [];
      const streamed: number[] = [];
      let n = 0;
      for (let run = 0; run < RUNS; run++) {
        // hyperd's own load of the same file.
        const a = `own_${n++}`;
        await pool.query(`CREATE TABLE ${a} ${DDL}`);
        const t0 = performance.now();
        await pool.query(`COPY ${a} FROM '${source}' WITH (FORMAT ${format === 'file' ? 'arrowfile' : 'arrowstream'})`);
        own.push(performance.now() - t0);
        for (const [kind, times] of [
          ['server', ours],
          ['streamed', streamed],
        ] as const) {
          const b = `hw_${n++}`;
          await pool.query(`CREATE TABLE ${b} ${DDL}`);
          const inbox = join(root, 'inbox');
          await mkdir(join(root, 'staging'), { recursive: true });
          await mkdir(inbox, { recursive: true });
          await copyFile(source, join(inbox, 'f.arrow'));
          const id = randomUUID();
          const t0 = performance.now();
          const claimed = claimFile(inbox, 'f.arrow', join(root, 'staging', `${id}-f.arrow`), { claimId: id, extension: '.arrow' });
          if (claimed.status !== 'claimed') throw new Error(`claim: ${claimed.status}`);
          const file = claimed.file;
          const capabilities = kind === 'server' ? db.capabilities : { ...db.capabilities, readsLocalFiles: false };
          const ctx: IngestContext = {
            capabilities,
            attempt: 1,
            fileState: new Map(),
            sqlType: (ty) => db.sqlType(ty),
            schema: { createTable: true },
            logger: silentLogger,
          };
          const rows = await pool.transaction(async (conn) => {
            const r = await arrowIngester.append(conn, file, { name: b }, ctx);
            if (r.isErr()) throw new IngestFailure(r.error);
            return r.value.rows;
          });
          times.push(performance.now() - t0);
          file.close();
          if (rows !== ROWS) throw new Error(`loaded ${rows} rows`);
          await pool.query(`DROP TABLE ${b}`);
        }
        await pool.query(`DROP TABLE ${a}`);
      }
      const line =
        `| ${format}, ${batches} batch${batches > 1 ? 'es' : ''} | ${median(own).toFixed(0)} ms ` +
        `(${own.map((x) => x.toFixed(0)).join(', ')}) | ${median(ours).toFixed(0)} ms ` +
        `(${ours.map((x) => x.toFixed(0)).join(', ')}) | ${(median(own) / median(ours)).toFixed(2)}× ` +
        `| ${median(streamed).toFixed(0)} ms (${streamed.map((x) => x.toFixed(0)).join(', ')}) ` +
        `| ${(median(own) / median(streamed)).toFixed(2)}× |`;
      console.log(line);
      lines.push(line);
    }
  }
} finally {
  await pool.close();
  await db.close();
  await rm(root, { recursive: true, force: true });
}
