/**
 * Did a checkpoint reach the file? hyperd writes a database out when the last session detaches
 * it. A reader's session on the same hyperd (`hyperwatch query`, psql, a BI tool) that has it
 * attached at that moment defers the write to its own detach: our DETACH then returns with the
 * commits still in memory only, and hyperd dying meanwhile loses them (measured: 3 committed rows
 * gone after a kill). The file's signature (mtime, size, inode) after the last writing transaction
 * tells: if it has not changed by the end of the checkpoint, nothing was written.
 */
import { statSync } from 'node:fs';
import type { DbConnection } from '../../../src/types.ts';

/**
 * mtime in ns, size and inode; undefined when the file cannot be seen from here, or when its
 * filesystem keeps whole milliseconds or coarser (then a write within the same tick would look
 * like none, and the check would keep committed files staged for nothing).
 */
export function fileSignature(path: string): string | undefined {
  try {
    const s = statSync(path, { bigint: true });
    if (s.mtimeNs % 1_000_000n === 0n) return undefined;
    return `${s.mtimeNs}:${s.size}:${s.ino}`;
  } catch {
    return undefined;
  }
}

/** Reading statements change nothing; everything else (INSERT, COPY, CREATE...) may. */
export function isWrite(text: string): boolean {
  return !/^\s*(?:SELECT|SHOW|VALUES)\b/i.test(text);
}

/** `conn`, calling `onWrite` before any statement that may change the database. */
export function trackingWrites(conn: DbConnection, onWrite: () => void): DbConnection {
  const mark =
    <A extends unknown[], R>(run: (text: string, ...rest: A) => R) =>
    (text: string, ...rest: A): R => {
      if (isWrite(text)) onWrite();
      return run(text, ...rest);
    };
  return {
    query: mark(conn.query.bind(conn)) as DbConnection['query'],
    execute: mark(conn.execute.bind(conn)),
    copyFrom: mark(conn.copyFrom.bind(conn)),
    // COPY ... TO writes nothing.
    ...(conn.copyTo ? { copyTo: conn.copyTo.bind(conn) } : {}),
    describeTable: conn.describeTable.bind(conn),
  };
}

export class NotWrittenError extends Error {
  readonly code = 'DATABASE_NOT_WRITTEN';
  constructor(database: string) {
    super(
      `${database} was not written to disk at this checkpoint: another session on this hyperd (a reader such as psql, a BI ` +
        `tool or a long query) still has it attached; the committed files stay in staging until that session detaches or ` +
        `disconnects`,
    );
    this.name = 'NotWrittenError';
  }
}
