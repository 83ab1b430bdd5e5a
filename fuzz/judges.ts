/**
 * The independent readers a mutant is judged by: DuckDB for Parquet, CSV and JSON, and arrow-rs
 * (through parquet-wasm) for Parquet. Each reads the whole file (every value, not only the
 * footer) and says how many rows it holds, or why it refuses it. A mutant either reader refuses
 * must not land a row.
 */
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { readParquet } from 'parquet-wasm';
import type { Format } from './mutate.ts';

/** `crashed`: the reader itself failed (a panic inside arrow-rs's WebAssembly): no verdict on the file. */
export type Verdict =
  | { readonly ok: true; readonly rows: number }
  | { readonly ok: false; readonly why: string; readonly crashed?: boolean };

export interface Judge {
  readonly name: string;
  readonly formats: readonly Format[];
  read(path: string, format: Format, bytes: Uint8Array): Promise<Verdict>;
}

const quote = (path: string) => `'${path.replaceAll("'", "''")}'`;

function short(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300);
}

/** DuckDB, materializing every column (a count alone would come from the footer). */
export async function duckdbJudge(): Promise<Judge & { close(): void }> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '2GB' });
  const conn: DuckDBConnection = await instance.connect();
  let n = 0;
  const source = (path: string, format: Format): string => {
    if (format === 'parquet') return `read_parquet(${quote(path)})`;
    // The dialect the seeds were written in, every column as text: a refusal is about the file's
    // structure (quotes, field counts, encoding), not about a type DuckDB guessed.
    if (format === 'csv')
      return (
        `read_csv(${quote(path)}, header = true, delim = ',', quote = '"', escape = '"', all_varchar = true, ` +
        'strict_mode = true, null_padding = false, max_line_size = 16777216)'
      );
    return `read_json(${quote(path)}, format = 'auto', maximum_object_size = 134217728)`;
  };
  return {
    name: 'DuckDB',
    formats: ['parquet', 'csv', 'json'],
    async read(path, format) {
      const table = `j${++n}`;
      try {
        await conn.run(`CREATE TEMP TABLE ${table} AS SELECT * FROM ${source(path, format)}`);
        const reader = await conn.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM ${table}`);
        return { ok: true, rows: Number(reader.getRowObjects()[0]!.n) };
      } catch (error) {
        return { ok: false, why: short(error) };
      } finally {
        await conn.run(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
      }
    },
    close() {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/** arrow-rs's Parquet reader (decodes every page into Arrow). */
export const arrowRsJudge: Judge = {
  name: 'arrow-rs (parquet-wasm)',
  formats: ['parquet'],
  async read(_path, _format, bytes) {
    try {
      const table = readParquet(bytes);
      let rows = 0;
      for (const batch of table.recordBatches()) {
        rows += batch.numRows;
        batch.free();
      }
      table.free();
      return { ok: true, rows };
    } catch (error) {
      return { ok: false, why: short(error), ...(error instanceof Error && error.name === 'RuntimeError' ? { crashed: true } : {}) };
    }
  },
};
