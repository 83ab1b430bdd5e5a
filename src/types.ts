/**
 * The small contracts between the core and its adapters and plugins. Everything a third party
 * implements (an ingester plugin, a DB adapter, an FS adapter) is described in `types/`, one file
 * per contract; this file is their one entry, for the core and for the public API.
 */
export * from './types/errors.ts';
export * from './types/tables.ts';
export * from './types/db.ts';
export * from './types/claimed-file.ts';
export * from './types/plugins.ts';
export * from './types/fs.ts';
