/**
 * The scan of small CSV files (plugins/csv/scan.ts): its line scan, taken for files without quotes
 * or carriage returns, gives the byte walk's answer on every such file (record count, header,
 * irregularity, ISO dates); files with quotes, carriage returns or blank lines take the walk. Pure
 * logic; the record counts against a CSV parser are tested in test/src/watcher/batching.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rng } from '../../../bench/lib/data.ts';
import { scanCsv, walkCsv } from '../../../plugins/csv/scan.ts';

const encoder = new TextEncoder();

const PIECES = ['2018-01-02', '2018-1-2 10:00', '01/02/2018', '', '5', 'abc', '2018', '20x8-01-01', ',', '\n', '\n\n', '"q"', '\r\n'];

function randomText(random: () => number, withQuotes: boolean): string {
  let text = random() < 0.1 ? '\ufeff' : '';
  text += 'id,d,e\n';
  const count = Math.floor(random() * 12);
  for (let i = 0; i < count; i++) {
    const fields = 1 + Math.floor(random() * 4);
    const line: string[] = [];
    for (let f = 0; f < fields; f++) {
      let piece = PIECES[Math.floor(random() * PIECES.length)]!;
      if (!withQuotes) piece = piece.replaceAll('"', '').replaceAll('\r', '');
      line.push(piece);
    }
    text += line.join(',');
    if (random() < 0.9 || i < count - 1) text += '\n';
  }
  return text;
}

describe('CSV scan of small files', () => {
  it('the line scan answers as the byte walk on 20,000 random files, with date fields or without', () => {
    const random = rng(20261203);
    let lineScanned = 0;
    for (let k = 0; k < 20_000; k++) {
      const text = randomText(random, k % 4 === 0);
      const bytes = encoder.encode(text);
      const start = text.startsWith('\ufeff') ? 3 : 0;
      for (const fields of [new Set<number>(), new Set([1]), new Set([0, 2])]) {
        const expected = walkCsv(bytes, start, 0x2c, fields);
        const got = scanCsv(bytes, 0x2c, fields);
        if (!expected.irregular) {
          assert.deepEqual(got, expected, JSON.stringify(text));
          if (!text.includes('"') && !text.includes('\r')) lineScanned++;
        } else assert.equal(got.irregular, true, JSON.stringify(text));
      }
    }
    assert.ok(lineScanned > 10_000, `only ${lineScanned} scans took the line scan`);
  });

  it('a date field in another form is found on any line, past the header only', () => {
    const fields = new Set([1]);
    assert.equal(scanCsv(encoder.encode('id,d\n1,2018-01-02\n2,\n3,2018-12-31\n'), 0x2c, fields).isoDates, true);
    assert.equal(scanCsv(encoder.encode('id,d\n1,2018-01-02\n2,01/02/2018\n'), 0x2c, fields).isoDates, false);
    assert.equal(scanCsv(encoder.encode('01/02/2018,d\n2018-01-02,1\n'), 0x2c, new Set([0])).isoDates, true);
    assert.equal(scanCsv(encoder.encode('id,d\n1,2018-01-02\n2,3\n'), 0x2c, fields).isoDates, false);
  });
});
