/** Durations as users write them: `90s`, `15m`, `12h`, `90d`, `1w`, `1h30m`. */

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Milliseconds of `text` (whole seconds at least); undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  if (!/^(?:\d+[smhdw])+$/i.test(text)) return undefined;
  return text
    .toLowerCase()
    .match(/\d+[smhdw]/g)!
    .reduce((ms, part) => ms + Number(part.slice(0, -1)) * UNITS[part.slice(-1)]!, 0);
}
