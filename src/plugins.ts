/** Extension-keyed plugin lookup: case-insensitive, longest extension wins. */
import type { IngesterPlugin } from './types.ts';

/**
 * Identity helper for plugin authors: gives the object its type without a cast.
 * @example
 * export const psv = defineIngester({ name: 'psv', extensions: ['.psv'], append(conn, file, table, ctx) { ... } });
 */
export function defineIngester<P extends IngesterPlugin>(plugin: P): P {
  return plugin;
}

export class DuplicateExtensionError extends Error {
  readonly code = 'DUPLICATE_EXTENSION';
  constructor(
    readonly extension: string,
    readonly plugins: readonly [string, string],
  ) {
    super(`extension ${extension} is claimed by both plugin "${plugins[0]}" and plugin "${plugins[1]}"`);
    this.name = 'DuplicateExtensionError';
  }
}

function normalize(extension: string): string {
  const lower = extension.toLowerCase();
  return lower.startsWith('.') ? lower : `.${lower}`;
}

export interface PluginMatch {
  readonly plugin: IngesterPlugin;
  readonly extension: string;
}

export class PluginRegistry {
  readonly #byExtension = new Map<string, IngesterPlugin>();

  /**
   * `builtins` first, then `extra`: an extra plugin replaces a builtin for the extensions it lists.
   * Two extras claiming the same extension is an error.
   */
  constructor(builtins: readonly IngesterPlugin[], extra: readonly IngesterPlugin[] = []) {
    for (const plugin of builtins) for (const ext of plugin.extensions) this.#byExtension.set(normalize(ext), plugin);
    const claimedByExtra = new Map<string, IngesterPlugin>();
    for (const plugin of extra) {
      for (const raw of plugin.extensions) {
        const ext = normalize(raw);
        const other = claimedByExtra.get(ext);
        if (other && other !== plugin) throw new DuplicateExtensionError(ext, [other.name, plugin.name]);
        claimedByExtra.set(ext, plugin);
        this.#byExtension.set(ext, plugin);
      }
    }
  }

  /** The plugin for a data file name, by its longest registered extension. */
  match(fileName: string): PluginMatch | undefined {
    const lower = fileName.toLowerCase();
    let best: PluginMatch | undefined;
    for (const [extension, plugin] of this.#byExtension) {
      if (lower.length > extension.length && lower.endsWith(extension) && (!best || extension.length > best.extension.length)) {
        best = { plugin, extension };
      }
    }
    return best;
  }

  extensions(): string[] {
    return [...this.#byExtension.keys()].sort();
  }
}
