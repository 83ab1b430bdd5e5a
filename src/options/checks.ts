/**
 * The checks and flag readers that the option table's entries share. A check's message begins
 * with the setting's name and says what it takes (see `OptionSpec.check`); a flag reader's names
 * the flag.
 */
import type { FlagResult, FlagText } from './spec.ts';
import { parseDuration } from '../util/duration.ts';

/** A value as a message shows it: strings quoted, the rest as JavaScript writes them. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

/** A number (for the API: the watcher clamps it into range, see resolve.ts). */
export function isNumber(name: string, what: string): (value: unknown) => string | undefined {
  return (value) => (typeof value === 'number' && !Number.isNaN(value) ? undefined : `${name} must be ${what}, got ${shown(value)}`);
}

export function isBoolean(name: string): (value: unknown) => string | undefined {
  return (value) => (typeof value === 'boolean' ? undefined : `${name} must be true or false, got ${shown(value)}`);
}

export function isText(name: string, what: string): (value: unknown) => string | undefined {
  return (value) => (typeof value === 'string' && value !== '' ? undefined : `${name} must be ${what}, got ${shown(value)}`);
}

/** One of `values`, listed in the message as the API writes them: `'fail' or 'skip'`. */
export function isOneOf(name: string, values: readonly string[]): (value: unknown) => string | undefined {
  return (value) =>
    (values as readonly unknown[]).includes(value) ? undefined : `${name} is ${shown(value)}; use ${listed(values.map((v) => `'${v}'`))}`;
}

/** An object with these methods (an adapter, a logger, a registry). */
export function hasMethods(name: string, what: string, methods: readonly string[]): (value: unknown) => string | undefined {
  return (value) => {
    const ok =
      typeof value === 'object' && value !== null && methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function');
    return ok ? undefined : `${name} must be ${what} (an object with ${listed(methods, 'and')} methods), got ${shown(value)}`;
  };
}

/** `a`, `a or b`, `a, b or c`. */
export function listed(values: readonly string[], last = 'or'): string {
  return values.length <= 1 ? (values[0] ?? '') : `${values.slice(0, -1).join(', ')} ${last} ${values.at(-1)}`;
}

// ------------------------------------------------------------------------------------------------
// Flag readers

/** `--max-concurrent 8`: a whole number. */
export function wholeNumberFlag(flag: string): (text: FlagText) => FlagResult<number> {
  return (text) =>
    typeof text === 'string' && /^\d+$/.test(text)
      ? { value: Number(text) }
      : { problem: `--${flag} expects a whole number, got ${JSON.stringify(text)}` };
}

/** `--on-bad-rows skip`: one of the flag's words, each standing for the setting's value. */
export function oneOfFlag<T>(flag: string, words: Readonly<Record<string, T>>): (text: FlagText) => FlagResult<T> {
  return (text) => {
    const known = Object.keys(words);
    if (typeof text === 'string' && Object.hasOwn(words, text)) return { value: words[text]! };
    return { problem: `--${flag} is ${listed(known)}, got ${JSON.stringify(text)}` };
  };
}

/** `4G`, `512M`, `1048576` → bytes (K, M, G, T: powers of 1024). */
export function bytesOf(text: string): number | undefined {
  const m = /^(\d+)([KMGT]?)i?B?$/i.exec(text.trim());
  if (!m || Number(m[1]) === 0) return undefined;
  return Number(m[1]) * 1024 ** ' KMGT'.indexOf((m[2] || ' ').toUpperCase());
}

export function sizeFlag(flag: string): (text: FlagText) => FlagResult<number> {
  return (text) => {
    const bytes = typeof text === 'string' ? bytesOf(text) : undefined;
    return bytes === undefined
      ? { problem: `--${flag} expects a size such as 4G, 512M or 1048576, got ${JSON.stringify(text)}` }
      : { value: bytes };
  };
}

/** What is wrong with a `ledgerRetention` (`--ledger-retention`, config `ledgerRetention`), or undefined. */
export function ledgerRetentionProblem(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms !== undefined && ms > 0) return undefined;
  return `is ${JSON.stringify(value)}, not a duration such as "90d", "12h" or "30m" (s, m, h, d, w; combined as "1d12h")`;
}
