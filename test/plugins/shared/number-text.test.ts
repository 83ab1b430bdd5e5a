/** Numbers as locales write them (plugins/shared/number-text.ts): the minus sign as Intl writes it for Nordic locales. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { numberReader, separatorProblem } from '../../../plugins/shared/number-text.ts';

describe('numbers as a locale writes them', () => {
  const swedish = numberReader({ decimal: ',', thousands: '\u00a0' });

  it('U+2212 (MINUS SIGN) before a number is a minus, as Intl writes it for sv-SE, nb-NO, fi-FI', () => {
    const written = new Intl.NumberFormat('sv-SE', { minimumFractionDigits: 2 }).format(-1234567.5);
    assert.ok(written.startsWith('\u2212'), `Intl wrote ${JSON.stringify(written)}`);
    assert.equal(swedish.read(written), '-1234567.50');
    assert.equal(swedish.read('\u22120,5'), '-0.5');
    assert.equal(swedish.read('-0,5'), '-0.5');
  });

  it('U+2212 anywhere else, or twice, is no number; it cannot be a separator', () => {
    for (const text of ['1\u22122', '\u2212\u22121', '\u2212', '1,5e\u22123', '+\u22121']) {
      assert.equal(typeof swedish.read(text), 'object', JSON.stringify(text));
    }
    assert.match(separatorProblem('\u2212') ?? '', /a sign/);
  });
});

describe('a number refused names the characters beyond ASCII it holds', () => {
  it('U+202F (as Intl writes for fr-FR) read with a plain space as thousands separator: the message tells them apart', () => {
    const written = new Intl.NumberFormat('fr-FR').format(1234.5);
    const read = numberReader({ decimal: ',', thousands: ' ' }).read(written);
    assert.equal(typeof read, 'object');
    assert.equal(
      (read as { reason: string }).reason,
      `"1\u202f234,5" is not a number written with decimal separator ',' and thousands separator ' ' ` +
        '(it holds U+202F; the thousands separator given is U+0020)',
    );
    assert.equal(numberReader({ decimal: ',', thousands: '\u202f' }).read(written), '1234.5');
    assert.doesNotMatch((numberReader({ decimal: ',' }).read('1.5') as { reason: string }).reason, /holds/);
  });
});
