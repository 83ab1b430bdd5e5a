/**
 * Unit tests of the PostgreSQL adapter's CSV end-of-data guard (pure functions, no database): a
 * record that is exactly `\.` becomes `"\."`, whatever the chunking.
 */
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import { CsvEndMarkerGuard, csvQuoting, type CsvQuoting, guardCopySource } from '../../../../adapters/db/postgres/csv-end-marker.ts';

const DOUBLE_QUOTE: CsvQuoting = { quote: 0x22, escape: 0x22 };

/** Runs the guard over `chunks` and returns the whole output. */
function guard(chunks: readonly (string | Uint8Array)[], quoting: CsvQuoting = DOUBLE_QUOTE): string {
  const g = new CsvEndMarkerGuard(quoting);
  const pieces = chunks.flatMap((c) => g.write(c));
  pieces.push(...g.end());
  return Buffer.concat(pieces).toString('utf8');
}

/**
 * The same rule, one character at a time, written from PostgreSQL's CopyReadLineText: the
 * reference the fast scan is checked against.
 */
function reference(text: string, quote = '"', escape = quote): string {
  let out = '';
  let inQuote = false;
  let lastWasEscape = false;
  let recordStart = true;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (
      !inQuote &&
      recordStart &&
      c === '\\' &&
      text[i + 1] === '.' &&
      (i + 2 === text.length || text[i + 2] === '\n' || text[i + 2] === '\r')
    ) {
      out += '"\\."';
      i++;
      recordStart = false;
      continue;
    }
    if (inQuote && c === escape && escape !== quote) lastWasEscape = !lastWasEscape;
    else if (c === quote && !lastWasEscape) inQuote = !inQuote;
    if (c !== escape) lastWasEscape = false;
    recordStart = !inQuote && (c === '\n' || c === '\r');
    out += c;
  }
  return out;
}

/** Every way of cutting `text` in two and in three pieces gives `expected`. */
function assertEveryChunking(text: string, expected: string, quoting: CsvQuoting = DOUBLE_QUOTE): void {
  assert.equal(guard([text], quoting), expected, 'one chunk');
  const bytes = Buffer.from(text);
  for (let a = 0; a <= bytes.length; a++) {
    assert.equal(guard([bytes.subarray(0, a), bytes.subarray(a)], quoting), expected, `split at ${a}`);
    for (let b = a; b <= bytes.length; b++) {
      const got = guard([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)], quoting);
      if (got !== expected) assert.equal(got, expected, `split at ${a} and ${b}`);
    }
  }
  // One byte at a time, with empty chunks between.
  const single = [...bytes].flatMap((byte) => [Uint8Array.of(byte), new Uint8Array(0)]);
  assert.equal(guard(single, quoting), expected, 'byte by byte');
}

describe('CSV end-of-data guard', () => {
  it('quotes a `\\.` record between rows (LF), at every chunking', () => {
    assertEveryChunking('id,name\n1,a\n\\.\n2,b\n', 'id,name\n1,a\n"\\."\n2,b\n');
  });

  it('quotes it with CRLF and with CR line ends, at every chunking', () => {
    assertEveryChunking('a\r\n1\r\n\\.\r\n2\r\n', 'a\r\n1\r\n"\\."\r\n2\r\n');
    assertEveryChunking('a\r1\r\\.\r2\r', 'a\r1\r"\\."\r2\r');
  });

  it('quotes it as the first record and as the last one without a line end', () => {
    assertEveryChunking('\\.\nx\n', '"\\."\nx\n');
    assertEveryChunking('x\n\\.', 'x\n"\\."');
    assertEveryChunking('\\.', '"\\."');
    assertEveryChunking('\\.\n\\.\r\n\\.\r\\.', '"\\."\n"\\."\r\n"\\."\r"\\."');
  });

  it('leaves `\\.` inside a quoted multi-line field untouched', () => {
    const text = 'id,note\n1,"first\n\\.\nlast"\n2,"\\.\r\n"\n3,"a""\n\\.\n"""\n';
    assertEveryChunking(text, text);
  });

  it('leaves `\\.` that is not a whole record untouched', () => {
    const text = 'a,b\n1,\\.\n\\.,2\n\\.x\n \\.\n\\\\.\nx\\.\n"\\."\n\\\n.\n\\';
    assertEveryChunking(text, text);
  });

  it('finds record starts after a quoted field closes', () => {
    assertEveryChunking('a\n"x\ny"\n\\.\n"q"\r\n\\.', 'a\n"x\ny"\n"\\."\n"q"\r\n"\\."');
  });

  it('follows another QUOTE character, and an ESCAPE that differs from it', () => {
    const single: CsvQuoting = { quote: 0x27, escape: 0x27 };
    assertEveryChunking("a\n'x\n\\.\n'\n\\.\n\"\n\\.\n", 'a\n\'x\n\\.\n\'\n"\\."\n"\n"\\."\n', single);
    // ESCAPE '\': `\"` stays inside quotes, `\\` does not protect the quote after it.
    const backslash: CsvQuoting = { quote: 0x22, escape: 0x5c };
    assertEveryChunking('a\n"x\\"\n\\.\n"\n\\.\n"y\\\\"\n\\.\n', 'a\n"x\\"\n\\.\n"\n"\\."\n"y\\\\"\n"\\."\n', backslash);
  });

  it('agrees with the one-character-at-a-time reference on random CSV, at random chunkings', () => {
    let seed = 12345;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    // Long runs of plain text too: quotes far apart are found by jumping, close ones by counting.
    const alphabet = ['\\', '.', '\\.', '"', '\n', '\r', '\r\n', ',', 'x', 'é', "'", 'y'.repeat(70), '\n\\.\n'];
    for (const [quote, escape] of [
      ['"', '"'],
      ['"', '\\'],
      ["'", "'"],
    ] as const) {
      const quoting = { quote: quote.charCodeAt(0), escape: escape.charCodeAt(0) };
      for (let round = 0; round < 600; round++) {
        const long = round % 3 === 0;
        let text = '';
        for (let n = random(long ? 400 : 40); n > 0; n--) text += alphabet[random(alphabet.length)];
        const bytes = Buffer.from(text);
        const chunks: Uint8Array[] = [];
        for (let at = 0; at < bytes.length; ) {
          const size = random(long ? 600 : 5);
          chunks.push(bytes.subarray(at, at + size));
          at += size;
        }
        assert.equal(guard(chunks, quoting), reference(text, quote, escape), JSON.stringify({ text, quote, escape }));
      }
    }
  });

  it('passes chunks without a marker through as they are (no copy)', () => {
    const g = new CsvEndMarkerGuard();
    const chunk = Buffer.from('a,b\n1,"\\.\n"\n');
    const out = g.write(chunk);
    assert.equal(out.length, 1);
    assert.equal(out[0], chunk);
    assert.deepEqual(g.end(), []);
  });

  it('takes string chunks (the JSON, Parquet and Arrow fallbacks stream strings)', () => {
    assert.equal(guard(['a\n', '\\', '.\n', 'é\n']), 'a\n"\\."\né\n');
  });
});

describe('csvQuoting', () => {
  it('reads the CSV COPY statements the plugins write', () => {
    assert.deepEqual(csvQuoting(`COPY "t" ("a", "b") FROM STDIN WITH (FORMAT csv, HEADER true, DELIMITER ',')`), DOUBLE_QUOTE);
    assert.deepEqual(csvQuoting(`COPY "s"."t" ("a") FROM STDIN WITH (FORMAT csv, HEADER true, DELIMITER E'\\t')`), DOUBLE_QUOTE);
    assert.deepEqual(csvQuoting(`COPY t (a) FROM STDIN WITH (FORMAT csv)`), DOUBLE_QUOTE);
    assert.deepEqual(csvQuoting(`copy t from stdin with (format 'CSV')`), DOUBLE_QUOTE);
  });

  it('reads QUOTE and ESCAPE, in both option syntaxes', () => {
    assert.deepEqual(csvQuoting(`COPY t FROM STDIN WITH (FORMAT csv, QUOTE '''')`), { quote: 0x27, escape: 0x27 });
    assert.deepEqual(csvQuoting(`COPY t FROM STDIN WITH (FORMAT csv, QUOTE '|', ESCAPE '\\')`), { quote: 0x7c, escape: 0x5c });
    assert.deepEqual(csvQuoting(`COPY t FROM STDIN WITH CSV HEADER QUOTE AS '"' ESCAPE AS E'\\\\'`), { quote: 0x22, escape: 0x5c });
  });

  it('is undefined for other formats and other statements', () => {
    assert.equal(csvQuoting(`COPY t (a) FROM STDIN WITH (FORMAT ARROWSTREAM)`), undefined);
    assert.equal(csvQuoting(`COPY t (a) FROM STDIN`), undefined);
    assert.equal(csvQuoting(`COPY t (a) FROM STDIN WITH (FORMAT text)`), undefined);
    assert.equal(csvQuoting(`COPY "csv" ("csv") FROM STDIN WITH (FORMAT binary)`), undefined);
    assert.equal(csvQuoting(`COPY t TO STDOUT WITH (FORMAT csv)`), undefined);
    assert.equal(csvQuoting(`SELECT 'FROM STDIN csv'`), undefined);
  });

  it('guardCopySource guards only CSV statements', async () => {
    const source = (async function* () {
      yield 'a\n\\.\nb\n';
    })();
    assert.equal(guardCopySource('COPY t (a) FROM STDIN WITH (FORMAT ARROWSTREAM)', source), source);
    const pieces: Uint8Array[] = [];
    for await (const piece of guardCopySource('COPY t (a) FROM STDIN WITH (FORMAT csv)', source)) pieces.push(Buffer.from(piece));
    assert.equal(Buffer.concat(pieces).toString(), 'a\n"\\."\nb\n');
  });
});
