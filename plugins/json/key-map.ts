/**
 * Which COPY column each record key fills: records name their columns anew in every row, so the
 * mapping is resolved once per key and reused.
 */
/** Maps record keys to COPY columns by the rule of `matchColumns`: exact name, else unique case-insensitive. */
export class KeyMap {
  readonly #index = new Map<string, number>();
  readonly #byName = new Map<string, number>();
  readonly #byLower = new Map<string, number[]>();
  /** For each column, the key that fills it: two keys filling one column is ambiguous. */
  readonly #keyOf: (string | undefined)[];

  constructor(readonly columns: readonly { readonly name: string }[]) {
    this.#keyOf = columns.map(() => undefined);
    for (const [i, c] of columns.entries()) {
      this.#byName.set(c.name, i);
      const lower = c.name.toLowerCase();
      this.#byLower.set(lower, [...(this.#byLower.get(lower) ?? []), i]);
    }
  }

  /** The column index for `key`; `-1` when no column takes it; `-2` when its column is another key's. */
  lookup(key: string): number {
    const known = this.#index.get(key);
    if (known !== undefined) return known;
    const index = this.#resolve(key);
    if (index === -1) return -1;
    if (this.#keyOf[index] !== undefined) return -2;
    this.#keyOf[index] = key;
    this.#index.set(key, index);
    return index;
  }

  /** The key that already fills the column `key` would fill. */
  rival(key: string): string | undefined {
    const index = this.#resolve(key);
    return index === -1 ? undefined : this.#keyOf[index];
  }

  #resolve(key: string): number {
    const candidates = this.#byLower.get(key.toLowerCase()) ?? [];
    return this.#byName.get(key) ?? (candidates.length === 1 ? candidates[0]! : -1);
  }
}
