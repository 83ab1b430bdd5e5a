/**
 * Numbers as a locale writes them (`1.234,50` in German, `1 234,5` in French, `1,234.50` in
 * English), made the text both databases read (`1234.50`). Read strictly: digits in groups of
 * three between thousands separators, one decimal separator, an exponent; anything else (a
 * `1.5` where the decimal separator is a comma) is refused, never read as another number. The
 * minus may be U+2212 (MINUS SIGN), as `Intl` writes it for Swedish, Norwegian, Finnish
 * (`−1 234,50`): it can mean nothing else.
 */

export interface NumberFormat {
  /** One character; `.` when unset. */
  readonly decimal: string;
  /** One character, or none. */
  readonly thousands?: string;
}

const SPECIAL = /^[+-]?(?:nan|inf|infinity)$/i;

function escape(c: string): string {
  return c.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

export interface NumberReader {
  /** `text` as the databases read it, or why it is not a number in this format. */
  read(text: string): string | { readonly reason: string };
  /** Whether `text` is a number in this format. */
  test(text: string): boolean;
}

export function numberReader(format: NumberFormat): NumberReader {
  const d = escape(format.decimal);
  const t = format.thousands === undefined ? undefined : escape(format.thousands);
  const whole = t === undefined ? '\\d+' : `(?:\\d{1,3}(?:${t}\\d{3})+|\\d+)`;
  const pattern = new RegExp(`^([+\\-\u2212]?)(${whole})?(?:${d}(\\d+))?([eE][+-]?\\d+)?$`);
  const thousands = format.thousands;
  const named = `decimal separator '${format.decimal}'${thousands === undefined ? '' : ` and thousands separator '${thousands}'`}`;
  const read = (raw: string): string | { reason: string } => {
    const text = raw.trim();
    if (SPECIAL.test(text)) return text;
    const m = pattern.exec(text);
    if (!m || (m[2] === undefined && m[3] === undefined))
      return { reason: `${JSON.stringify(raw)} is not a number written with ${named}${unseen(text, format)}` };
    const digits = thousands === undefined || m[2] === undefined ? (m[2] ?? '') : m[2].replaceAll(thousands, '');
    const sign = m[1] === '\u2212' ? '-' : m[1];
    return `${sign}${digits === '' ? '0' : digits}${m[3] === undefined ? '' : `.${m[3]}`}${m[4] ?? ''}`;
  };
  return { read, test: (text) => typeof read(text) === 'string' };
}

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * The characters of `text` beyond ASCII that are no separator, by code point: a space U+202F (as
 * `Intl` writes for French) or U+00A0 looks like the space given as a separator, and the message
 * would show the two alike.
 */
function unseen(text: string, format: NumberFormat): string {
  const others = [...new Set(text)].filter((c) => c.charCodeAt(0) > 0x7e && c !== format.decimal && c !== format.thousands);
  if (others.length === 0) return '';
  const given = format.thousands === undefined ? '' : `; the thousands separator given is ${codePoint(format.thousands)}`;
  return ` (it holds ${others.map(codePoint).join(', ')}${given})`;
}

/** Why `value` cannot be a decimal or thousands separator, or undefined. */
export function separatorProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || [...value].length !== 1) return `must be one character, got ${JSON.stringify(value)}`;
  if (/[0-9+\-\u2212eE"\r\n]/.test(value))
    return `cannot be ${JSON.stringify(value)} (a digit, a sign, an exponent, a quote or a line break)`;
  return undefined;
}
