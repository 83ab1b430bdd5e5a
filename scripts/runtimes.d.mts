/** Types for scripts/runtimes.mjs, for the TypeScript tests that import it. */
export declare const ROOT: string;
export type RuntimeName = 'node' | 'deno' | 'bun';
export declare const RUNTIMES: readonly RuntimeName[];
export type FoundRuntime =
  | { readonly path: string; readonly source: string; readonly error?: undefined }
  | { readonly error: string; readonly path?: undefined };
export declare function findRuntime(name: RuntimeName, modulesDir?: string): FoundRuntime;
export declare function versionOf(path: string): string | undefined;
