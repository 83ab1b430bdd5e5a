/**
 * Seeded data sets. Every row has the same six columns in every format, so one table definition
 * (`TABLE_COLUMNS`) takes them all, and a fixed seed gives the same bytes on every run.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

/** Columns of every generated file, with the Hyper types of the pre-created tables. */
export const TABLE_COLUMNS: readonly (readonly [name: string, type: string])[] = [
  ['id', 'BIGINT'],
  ['ts', 'TIMESTAMP'],
  ['category', 'TEXT'],
  ['amount', 'DOUBLE PRECISION'],
  ['qty', 'INTEGER'],
  ['note', 'TEXT'],
];

export const CSV_HEADER = `${TABLE_COLUMNS.map(([n]) => n).join(',')}\n`;

/** mulberry32: small, fast, and good enough to make varied but repeatable rows. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

interface Row {
  id: number;
  ts: string;
  category: string;
  amount: string;
  qty: number;
  note: string;
}

function makeRow(random: () => number, id: number): Row {
  const ts =
    `2026-${pad2(1 + Math.floor(random() * 12))}-${pad2(1 + Math.floor(random() * 28))} ` +
    `${pad2(Math.floor(random() * 24))}:${pad2(Math.floor(random() * 60))}:${pad2(Math.floor(random() * 60))}`;
  let note = '';
  const length = 8 + Math.floor(random() * 8);
  for (let i = 0; i < length; i++) note += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return {
    id,
    ts,
    category: `cat_${pad2(Math.floor(random() * 40))}`,
    amount: (random() * 20000 - 5000).toFixed(2),
    qty: Math.floor(random() * 500),
    note,
  };
}

export const csvLine = (r: Row) => `${r.id},${r.ts},${r.category},${r.amount},${r.qty},${r.note}\n`;
export const jsonLine = (r: Row) =>
  `{"id":${r.id},"ts":"${r.ts}","category":"${r.category}","amount":${r.amount},"qty":${r.qty},"note":"${r.note}"}\n`;

export interface Written {
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
}

const CHUNK_CHARS = 4 * 1024 * 1024;

/**
 * Writes rows until `limit.rows` rows or `limit.bytes` bytes (whichever is given), ids from
 * `firstId`. Written in 4 MB pieces, so even a 2 GB file takes little memory here. With
 * `distinct`, the columns after `id` come from that many seeded rows, drawn at random: the
 * bytes still vary, and a multi-gigabyte file is written in seconds rather than minutes.
 */
export async function writeRows(
  path: string,
  format: 'csv' | 'jsonl',
  limit: { rows?: number; bytes?: number },
  seed: number,
  options: { firstId?: number; distinct?: number } = {},
): Promise<Written> {
  const random = rng(seed);
  const firstId = options.firstId ?? 1;
  const full = format === 'csv' ? csvLine : jsonLine;
  let line = (id: number) => full(makeRow(random, id));
  if (options.distinct) {
    // Pooled lines are cut just after their id (CSV `0,...`, JSON `{"id":0,...`); each row puts
    // its own id back in front of a tail drawn at random.
    const head = format === 'csv' ? '' : '{"id":';
    const tails = Array.from({ length: options.distinct }, () => {
      const l = full(makeRow(random, 0));
      return l.slice(l.indexOf(','));
    });
    line = (id: number) => `${head}${id}${tails[Math.floor(random() * tails.length)]!}`;
  }
  const file = await open(path, 'w');
  let rows = 0;
  let bytes = 0;
  try {
    let chunk = format === 'csv' ? CSV_HEADER : '';
    const maxRows = limit.rows ?? Number.POSITIVE_INFINITY;
    const maxBytes = limit.bytes ?? Number.POSITIVE_INFINITY;
    while (rows < maxRows && bytes + chunk.length < maxBytes) {
      chunk += line(firstId + rows);
      rows++;
      if (chunk.length >= CHUNK_CHARS) {
        await file.write(chunk);
        bytes += chunk.length; // ASCII only: characters are bytes
        chunk = '';
      }
    }
    await file.write(chunk);
    bytes += chunk.length;
  } finally {
    await file.close();
  }
  return { path, rows, bytes };
}

/** A small CSV file's text: `rows` rows, ids from `firstId`. */
export function smallCsv(rows: number, seed: number, firstId: number): string {
  const random = rng(seed);
  let text = CSV_HEADER;
  for (let i = 0; i < rows; i++) text += csvLine(makeRow(random, firstId + i));
  return text;
}

/** A small CSV whose row `badRow` (1-based) has a quantity that is not a number. */
export function badCsv(rows: number, seed: number, badRow: number): string {
  const lines = smallCsv(rows, seed, 1).split('\n');
  const fields = lines[badRow]!.split(',');
  fields[4] = 'not-a-number';
  lines[badRow] = fields.join(',');
  return lines.join('\n');
}

/** `source` gzip-compressed (level 6, as `gzip` does by default) into `target`. */
export async function gzipFile(source: string, target: string): Promise<{ path: string; bytes: number }> {
  await pipeline(createReadStream(source), createGzip({ level: 6 }), createWriteStream(target));
  return { path: target, bytes: (await stat(target)).size };
}
