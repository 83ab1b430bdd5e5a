/**
 * The ISO date check (plugins/csv/iso-date-check.ts): a date value that does not start as ISO is
 * found at its first byte that is not (a field cut short: at its end), whatever the chunks the
 * file is read in; ISO values, empty ones and the other columns' values pass. Pure logic; the
 * loads it decides are tested on hyperd by test/helpers/csv-dates-suite.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type IsoDateDialect, IsoDateCheck } from '../../../plugins/csv/iso-date-check.ts';
import { feedThroughOneBuffer, sameInEveryPieceSize } from '../../helpers/chunks.ts';

const DEFAULT: IsoDateDialect = { delimiter: ',', quote: '"', escape: '"', header: true };

/** The offset found with `bytes` fed `size` at a time, through one buffer overwritten after each piece. */
function check(bytes: Uint8Array, dialect: IsoDateDialect, fields: readonly number[], size: number): number | undefined {
  const dates = new IsoDateCheck(dialect, fields);
  feedThroughOneBuffer(bytes, 0, size, (piece) => dates.feed(piece));
  dates.end();
  return dates.problem;
}

/** The offset found, the same for every chunk size (1 byte up to the whole file). */
function found(text: string, fields: readonly number[], dialect: IsoDateDialect = DEFAULT): number | undefined {
  const bytes = new TextEncoder().encode(text);
  return sameInEveryPieceSize(bytes.length, JSON.stringify(text), (size) => check(bytes, dialect, fields, size));
}

describe('ISO date check', () => {
  it('ISO values, empty (NULL) values and other columns pass, quoted or not, CRLF or LF, with or without a last line feed', () => {
    for (const text of [
      'id,ts,note\n1,2018-01-02 10:00:00,x\n2,,y\n3,"2018-01-03",z\n',
      'id,ts,note\r\n1,2018-01-02,x\r\n2,,\r\n',
      'id,ts\n1,2018-01-02\n2,',
      'id,ts\n1,2018-01-02',
      // Quoted fields around it may hold delimiters, line feeds and doubled quotes.
      'id,ts,note\n"1,\n""2",2018-1-2,"a\nb,c"\n"x",2019-12-31,"""q"""\n',
      // The header is never read as dates, nor are the other columns.
      'a date,ts\n01/02/2018,2018-02-01\n',
    ])
      assert.equal(found(text, [1]), undefined, JSON.stringify(text));
  });

  it('finds the first value in another form, at its byte', () => {
    const text = 'id,ts\n1,2018-01-02\n2,01/02/2018\n3,02/03/2018\n';
    assert.equal(found(text, [1]), text.indexOf('01/02') + 2, 'at the byte that is no digit');
    assert.equal(found('id,ts\n1,2018\n', [1]), 'id,ts\n1,2018'.length, 'cut short before its dash');
    assert.equal(found('id,ts\n1,"2018-01-02"\n2,""\n', [1]), 'id,ts\n1,"2018-01-02"\n2,""'.length, 'quoted empty is text, not NULL');
    assert.equal(found('id,ts\n1, 2018-01-02\n', [1]), 'id,ts\n1,'.length, 'a leading space');
    assert.equal(found('id,ts\n1,"2018-01-02"\n2,"a\n2018-01-02",\n', [1]), 'id,ts\n1,"2018-01-02"\n2,"'.length);
  });

  it('checks every date field of a record, not only the first', () => {
    const text = 'a,from,b,to,c\n1,2018-01-01,x,2018-01-02,y\n2,2018-01-01,x,1/2/2018,y\n';
    assert.equal(found(text, [1, 3]), text.lastIndexOf('1/2/2018') + 1);
    assert.equal(found(text, [1]), undefined);
  });

  it('follows the dialect: delimiter, quote, backslash escape, no header', () => {
    const semi: IsoDateDialect = { delimiter: ';', quote: "'", escape: '\\', header: false };
    assert.equal(found("1;'2018-01-02';'it\\'s; \n2'\n2;2018-01-03;x\n", [1], semi), undefined);
    const text = "1;2018-01-02;'a\\';b'\n2;03.01.2018;x\n";
    assert.equal(found(text, [1], semi), text.indexOf('03.01') + 2);
    assert.equal(found('01/02/2018,2018-01-01\n', [0], { ...DEFAULT, header: false }), 2);
  });

  it('a file without date fields, or of one header line, passes', () => {
    assert.equal(found('id,ts\n', [1]), undefined);
    assert.equal(found('id,ts\n1,x\n', []), undefined);
  });
});
