/**
 * The composition root: the one module that knows which built-in database adapters, filesystem
 * adapters and ingester plugins exist, and builds them from settings. The core (src/watcher/,
 * src/protocol/) knows only their contracts (src/types.ts); settings that concern one adapter
 * (Hyper's `database` and `endpoint`, PostgreSQL's `url`) are read here and nowhere in the core.
 *
 * One entry, one file a kind of part in src/compose/: the ingester plugins (`ingesters.ts`), the
 * filesystem adapters (`fs-adapters.ts`), the database settings and their checks (`db-choice.ts`)
 * and the database adapters built from them (`db-adapters.ts`).
 */
export {
  builtinIngesters,
  COMPRESSIBLE_EXTENSIONS,
  csvDelimiterProblem,
  csvDialectOf,
  csvOptionProblems,
  encodingProblem,
  jsonDialectOf,
  sniffCsv,
  sniffedFlags,
  type TextSettings,
  watcherPlugins,
} from './compose/ingesters.ts';
export { defaultFsAdapter, fsAdapterByName } from './compose/fs-adapters.ts';
export { ADAPTERS, type AdapterName, checkDbChoice, type DbChoice, type DbChoiceProblem, flagName } from './compose/db-choice.ts';
export {
  createDbAdapter,
  type ReaderDb,
  readerDb,
  type ReaderOptions,
  readersEndpoint,
  watcherDb,
} from './compose/db-adapters.ts';
