/** Loggers: a silent one for libraries, and line loggers (text or JSON) for the CLI. */
import type { Logger } from './types.ts';

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Whether `text` names a level (a flag's value, a config's). */
export function isLogLevel(text: string): text is LogLevel {
  return text === 'debug' || text === 'info' || text === 'warn' || text === 'error';
}
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * Writes one line per message through `write` (stderr in the CLI, so stdout stays for results).
 * `json`: one JSON object per line; otherwise `time level message key=value ...`.
 */
export function lineLogger(write: (line: string) => void, options: { json?: boolean; level?: LogLevel } = {}): Logger {
  const min = ORDER[options.level ?? 'info'];
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (ORDER[level] < min) return;
    const time = new Date().toISOString();
    if (options.json) {
      write(JSON.stringify({ time, level, message, ...fields }));
      return;
    }
    const extras = fields
      ? Object.entries(fields)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? (/\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v)}`)
          .join(' ')
      : '';
    write(`${time} ${level.toUpperCase().padEnd(5)} ${message}${extras ? ` ${extras}` : ''}`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}
