/**
 * Settings in a serve config's watcher (`watchers[i]`, the body of `POST /watchers`), from the option
 * table: each key is the setting's own name. Its JSON Schema (docs.ts writes it into
 * schema/hyperwatch.config.schema.json), the checks the schema cannot make, and the watcher's
 * `WatchOptions` read from it.
 */
import type { JsonSchema, ServeSpec } from './spec.ts';
import { API_ONLY, OPTION_ENTRIES, type OptionEntry } from './table.ts';
import { csvTogetherProblem } from './table/csv-dialect.ts';
import type { DatabaseSettings, WatchOptions } from './watch-options.ts';

/** What a serve config's watcher holds besides `dir` and `table`: every setting but the API's own, `fs` by name. */
export type ServedSettings = Omit<WatchOptions, 'db' | 'registry' | 'plugins' | 'logger' | 'signal' | 'fs'> &
  DatabaseSettings & { readonly fs?: string };

type ServedEntry = OptionEntry & { readonly serve: ServeSpec<unknown> };

/** The served settings, in the table's order. */
export const SERVED: readonly ServedEntry[] = OPTION_ENTRIES.flatMap((e) => (e.spec.serve ? [{ ...e, serve: e.spec.serve }] : []));

/** Names the API alone takes, for the type above to be checked against (test/src/options/options.test.ts). */
export const NOT_SERVED: readonly string[] = API_ONLY;

/** A bad setting in a config: where (`watchers[1].encoding`), what is wrong, the fix (serve's ConfigIssue). */
export interface SettingIssue {
  readonly path: string;
  readonly problem: string;
  readonly fix: string;
}

/** A doc's Markdown as schema text: links reduced to their text. */
export function plainText(doc: string): string {
  return doc.replace(/\[([^\]]+)\]\([^)]+\)/g, '$1');
}

/** The JSON Schema of each served setting: `definitions.watcher.properties` besides `dir` and `table`. */
export function watcherSchemaProperties(): Record<string, JsonSchema> {
  const properties: Record<string, JsonSchema> = {};
  for (const { name, spec, serve } of SERVED) {
    properties[name] = {
      ...serve.schema,
      ...(spec.range ? { minimum: spec.range.min, ...(spec.range.max !== undefined ? { maximum: spec.range.max } : {}) } : {}),
      ...(spec.default !== undefined ? { default: spec.default } : {}),
      description: plainText(spec.doc),
      'x-fix': serve.fix,
    };
  }
  return properties;
}

/**
 * What the schema cannot check in the watcher settings at `path` (`watchers[1]`, or '' for a
 * request body): each setting's own check (a character set's name, a delimiter), the setting's name
 * left out of the problem, since the path names it. Database settings are checked by `checkDbChoice`.
 */
export function settingIssues(settings: ServedSettings, path: string): SettingIssue[] {
  const issues: SettingIssue[] = [];
  for (const { name, spec, serve } of SERVED) {
    const value = (settings as Record<string, unknown>)[name];
    if (value === undefined || spec.to !== 'watcher' || serve.read) continue;
    const problem = spec.check?.(value);
    if (problem === undefined) continue;
    issues.push({
      path: `${path}.${name}`,
      problem: problem.startsWith(name) ? problem.slice(name.length).replace(/^:?\s*/, '') : problem,
      fix: serve.checkFix ?? serve.fix,
    });
  }
  // Settings that are good alone but not together (a decimal separator that is the delimiter too).
  const together = issues.length === 0 ? csvTogetherProblem(settings) : undefined;
  const entry = together && SERVED.find((e) => e.name === together.option);
  if (together && entry)
    issues.push({ path: `${path}.${together.option}`, problem: together.problem, fix: entry.serve.checkFix ?? entry.serve.fix });
  return issues;
}

/** The `WatchOptions` a served watcher's settings give (its database: `createDbAdapter`, from the same settings). */
export function watchOptionsOf(settings: ServedSettings): WatchOptions {
  const options: Record<string, unknown> = {};
  for (const { name, spec, serve } of SERVED) {
    const value = (settings as Record<string, unknown>)[name];
    if (value === undefined || spec.to !== 'watcher') continue;
    const read = serve.read as ((value: unknown) => unknown) | undefined;
    const setting = read ? read(value) : value;
    if (setting !== undefined) options[name] = setting;
  }
  return options as WatchOptions;
}
