/**
 * The role a `.hyper` file belongs to, and the role the embedded hyperd runs as for it.
 *
 * A `.hyper` file opens only for the role that created it (hyperd answers `access denied` to any
 * other), and Tableau's own tools (the Hyper API, pantab, Tableau Desktop's extracts, hyperdb-mcp)
 * start hyperd as `tableau_internal_user`. So new files are made as that role, and an existing file
 * is opened as the role it names: files made by earlier hyperwatch releases belong to `hyperwatch`.
 *
 * hyperd keeps its catalog in the file as JSON, roles included (`"roles": [{..., "name":
 * "hyperwatch", "superuser": true, "login": true, ...}]`), near the start of the file (seen at
 * 8–21 KiB in files from a few KiB to 150 MiB; later copies follow further in). Reading it is the
 * only way to learn the role without a server of each role; when it cannot be found the default
 * role is tried and hyperd's refusal is explained (busy.ts, explainAccessDenied).
 */
import { Buffer } from 'node:buffer';
import { closeSync, openSync, readSync } from 'node:fs';

/** The role Tableau's tools run hyperd as: files of this role open in all of them. */
export const TABLEAU_ROLE = 'tableau_internal_user';
/** The role every `.hyper` file made by earlier hyperwatch releases belongs to. */
export const LEGACY_ROLE = 'hyperwatch';

/** How much of the file is searched for the catalog. */
const SCAN_BYTES = 4 * 1024 * 1024;
const MARKER = '"roles": [';

/**
 * The login role that owns the `.hyper` file at `path`; undefined when the file does not exist or
 * its catalog was not found where hyperd writes it.
 */
export function fileRole(path: string): string | undefined {
  const head = readHead(path);
  if (head === undefined) return undefined;
  for (let at = head.indexOf(MARKER); at >= 0; at = head.indexOf(MARKER, at + MARKER.length)) {
    const role = ownerIn(head, at + MARKER.length - 1);
    if (role !== undefined) return role;
  }
  return undefined;
}

/** The first bytes of the file as latin1 text (the catalog's JSON is ASCII); undefined: no file. */
function readHead(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const buffer = Buffer.alloc(SCAN_BYTES);
    let length = 0;
    for (let n = -1; n !== 0 && length < SCAN_BYTES; length += n) n = readSync(fd, buffer, length, SCAN_BYTES - length, length);
    return buffer.toString('latin1', 0, length);
  } finally {
    closeSync(fd);
  }
}

interface CatalogRole {
  readonly name?: unknown;
  readonly login?: unknown;
  readonly superuser?: unknown;
}

/** Parses the JSON array starting at `start` and returns its login superuser's name. */
function ownerIn(text: string, start: number): string | undefined {
  const end = arrayEnd(text, start);
  if (end === undefined) return undefined;
  let roles: unknown;
  try {
    roles = JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
  if (!Array.isArray(roles)) return undefined;
  const owner = (roles as CatalogRole[]).find(
    (r) => r && r.login === true && r.superuser === true && typeof r.name === 'string' && r.name !== '',
  );
  return owner?.name as string | undefined;
}

/** Index of the `]` closing the array opened at `start`, skipping over strings. */
function arrayEnd(text: string, start: number): number | undefined {
  let depth = 0;
  let inString = false;
  // A catalog's roles array is a few hundred bytes per role: give up well before the next page.
  const limit = Math.min(text.length, start + 64 * 1024);
  for (let i = start; i < limit; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      if (--depth === 0) return i;
    }
  }
  return undefined;
}
