/** The option table, part five: what happens to a file once its commit is durable. */
import { isBoolean, isOneOf, isText, oneOfFlag } from '../checks.ts';
import type { OptionTable } from '../spec.ts';
import { ON_SUCCESS } from '../watch-options.ts';

const WITH_ARCHIVE = {
  flag: 'on-success',
  value: 'archive',
  problem: '--archive-dir and --archive-by-date go with --on-success archive',
} as const;

export const SETTLE_OPTIONS = {
  onSuccess: {
    to: 'watcher',
    doc:
      "once a file's commit is durable (on Hyper: after the checkpoint), `'delete'` removes it and its sentinel; `'archive'` moves " +
      'both into `archiveDir`, under their own name, or `name.<claim id>.ext` when that is taken (never replacing a file). A crash ' +
      'between commit and move is finished by the next start, as a delete is',
    default: 'delete',
    check: isOneOf('onSuccess', ON_SUCCESS),
    flag: {
      name: 'on-success',
      type: 'string',
      value: '<delete|archive>',
      help: 'after the commit is durable: remove the file and its\nsentinel (default), or move both to the archive folder',
      parse: oneOfFlag('on-success', { delete: 'delete', archive: 'archive' } as const),
    },
    serve: { schema: { enum: [...ON_SUCCESS] }, fix: 'Use "delete" or "archive".' },
  },
  archiveDir: {
    to: 'watcher',
    doc:
      "where `'archive'` moves files; relative paths are taken from the watched directory. Subfolders of the watched directory are " +
      'not watched (with `recursive`, the archive is still left out), so an archive inside it is never ingested again; the watched ' +
      'directory itself is refused. On another filesystem files are copied, then removed',
    default: 'archive',
    defaultText: '`<dir>/archive`',
    check: isText('archiveDir', 'a folder path'),
    flag: {
      name: 'archive-dir',
      type: 'string',
      value: '<folder>',
      requires: WITH_ARCHIVE,
      help: 'where archive moves them (default <dir>/archive; relative to <dir>)',
    },
    serve: { schema: { type: 'string', minLength: 1 }, fix: 'Give a folder path, e.g. "archive" or "/data/archive".' },
  },
  archiveByDate: {
    to: 'watcher',
    doc: 'archive into one subfolder per day (UTC): `archive/2026-12-01/`',
    default: false,
    check: isBoolean('archiveByDate'),
    flag: {
      name: 'archive-by-date',
      type: 'boolean',
      requires: WITH_ARCHIVE,
      help: 'archive into one subfolder per day (UTC), e.g. archive/2026-12-01/',
    },
    serve: { schema: { type: 'boolean' }, fix: 'Use true or false (no quotes).' },
  },
} as const satisfies Partial<OptionTable>;
