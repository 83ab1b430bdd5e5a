/**
 * Loads other than append: what a file does to the table (`mode`), the columns that identify a
 * row (`key`), what two rows of one file with the same key mean (`duplicateKeys`), and the order
 * ready files are applied in (`order`). The names and the checks on their combination, shared by
 * the API, the CLI and serve configs.
 */

export const LOAD_MODES = ['append', 'replace', 'upsert', 'replace-keys'] as const;
export type LoadMode = (typeof LOAD_MODES)[number];

export const DUPLICATE_KEYS = ['last', 'fail'] as const;
export type DuplicateKeys = (typeof DUPLICATE_KEYS)[number];

export const APPLY_ORDERS = ['arrival', 'name'] as const;
export type ApplyOrder = (typeof APPLY_ORDERS)[number];

/** The modes that need `key`. */
export function usesKey(mode: LoadMode): boolean {
  return mode === 'upsert' || mode === 'replace-keys';
}

/** `id` or `a,b` → the column names; a problem for an empty name or one given twice. */
export function parseKey(value: string | readonly string[]): { readonly key: readonly string[] } | { readonly problem: string } {
  const names = typeof value === 'string' ? value.split(',').map((n) => n.trim()) : [...value];
  if (names.length === 0) return { problem: 'key must name at least one column, e.g. "id" or "region,day"' };
  for (const name of names) {
    if (typeof name !== 'string' || name === '') return { problem: 'key has an empty column name; use e.g. "id" or "region,day"' };
  }
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name.toLowerCase())) return { problem: `key names column "${name}" twice` };
    seen.add(name.toLowerCase());
  }
  return { key: names };
}

/** What is wrong with `mode` and `key` together (each one already checked on its own), or undefined. */
export function modeKeyProblem(
  mode: LoadMode | undefined,
  key: unknown,
): { readonly field: 'mode' | 'key'; readonly problem: string; readonly fix: string } | undefined {
  const m = mode ?? 'append';
  if (key !== undefined && !usesKey(m))
    return {
      field: 'key',
      problem: `key is set but mode is '${m}', which uses no key`,
      fix: "Set mode to 'upsert' or 'replace-keys' (--mode upsert), or remove key.",
    };
  if (key === undefined && usesKey(m))
    return {
      field: 'mode',
      problem: `mode '${m}' needs key: the columns that identify a row`,
      fix: 'Give key, e.g. key: "id" (--key id), or key: ["region", "day"] (--key region,day).',
    };
  return undefined;
}
