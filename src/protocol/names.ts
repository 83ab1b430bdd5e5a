/** Names of the sentinel protocol: which entries are sentinels, which are ignored, claim names. */
import { READY_SUFFIX } from '../constants.ts';

/**
 * In-progress files by convention: dot-files (the watcher's own folder too) and `*.tmp`. A name
 * in a subfolder (`recursive`, `a/b/x.csv`) is judged by its last segment; discovery never goes
 * into a dot-folder, so only that one can start with a dot.
 */
export function isIgnoredName(name: string): boolean {
  return baseName(name).startsWith('.') || name.toLowerCase().endsWith('.tmp');
}

/** The last `/`-separated segment of a relative name (the name itself in the watched directory). */
export function baseName(name: string): string {
  const slash = name.lastIndexOf('/');
  return slash < 0 ? name : name.slice(slash + 1);
}

/**
 * `readyWhen: 'stable'`: names of files still being written by convention, besides the ignored
 * ones: `*.part`, `*.partial`, `*.crdownload`, `*.filepart` (browsers, WinSCP, rsync-like uploads),
 * `*.swp` and `*~` (editors), `~$*` (Office's lock files); and the protocol's own `.ready`/`.error`.
 */
const IN_PROGRESS = /(\.(part|partial|crdownload|filepart|swp|ready|error)|~)$/i;

/** A name `readyWhen: 'stable'` may take once it stops changing. */
export function isStableCandidate(name: string): boolean {
  return !isIgnoredName(name) && !baseName(name).startsWith('~$') && !IN_PROGRESS.test(name);
}

/** `X.ready` → `X`; undefined for anything that is not a sentinel of a usable data name. */
export function dataNameOf(readyName: string): string | undefined {
  if (!readyName.endsWith(READY_SUFFIX) || isIgnoredName(readyName)) return undefined;
  const data = readyName.slice(0, -READY_SUFFIX.length);
  return data === '' || isIgnoredName(data) ? undefined : data;
}

/**
 * Random bytes drawn 4 KiB at a time: one `getRandomValues` call per claim cost about 25 µs here,
 * a visible share of a flood of small files.
 */
const entropy = new Uint8Array(4096);
let entropyUsed = entropy.length;

/** `bytes` random bytes as hex, from the pool above. */
export function randomHex(bytes: number): string {
  if (entropyUsed + bytes > entropy.length) {
    crypto.getRandomValues(entropy);
    entropyUsed = 0;
  }
  let hex = '';
  for (let i = 0; i < bytes; i++) hex += entropy[entropyUsed + i]!.toString(16).padStart(2, '0');
  entropyUsed += bytes;
  return hex;
}

/** Sortable by time, unique by 64 random bits: `mg3k2p1a-9f8e7d6c5b4a3210`. No `~` in it. */
export function newClaimId(now = Date.now()): string {
  return `${now.toString(36).padStart(9, '0')}-${randomHex(8)}`;
}

/**
 * Staged name of a claimed file: `<claimId>~<original name>`. Staging is one flat folder, so a
 * name in a subfolder (`recursive`: `a/b/x.csv`) is staged as `<claimId>^a%2Fb%2Fx.csv`, `%` and
 * `/` escaped: a claim id holds neither `~` nor `^`, so the first of them tells the two forms
 * apart, and two files `a/x.csv` and `b/x.csv` never share a staged name.
 */
export function stagedName(claimId: string, name: string): string {
  return name.includes('/') ? `${claimId}^${name.replaceAll('%', '%25').replaceAll('/', '%2F')}` : `${claimId}~${name}`;
}

export function parseStagedName(staged: string): { claimId: string; name: string } | undefined {
  const at = staged.search(/[~^]/);
  if (at <= 0 || at === staged.length - 1) return undefined;
  const rest = staged.slice(at + 1);
  if (staged[at] === '~') return { claimId: staged.slice(0, at), name: rest };
  return { claimId: staged.slice(0, at), name: rest.replaceAll('%2F', '/').replaceAll('%25', '%') };
}

/**
 * A name in `failed/` that does not collide with an earlier failure: the original when free,
 * else the claim id inserted before the extension (`orders.csv` → `orders.<claimId>.csv`).
 */
export function failedNameCandidates(name: string, claimId: string, extension: string): [string, string] {
  const ext = extension && name.toLowerCase().endsWith(extension) ? name.slice(name.length - extension.length) : '';
  return [name, `${name.slice(0, name.length - ext.length)}.${claimId}${ext}`];
}

/** What `newClaimId` makes. */
const CLAIM_ID = /^[0-9a-z]{9,}-[0-9a-f]{16}$/;

/**
 * `readyWhen: 'marker'`: a claimed folder in staging, `<claimId>@<folder>`, a folder itself (its
 * files keep their own names inside). `@` is never in a claim id, and a staged file's name has
 * `~` or `^` right after its claim id: the two never read as each other.
 */
export function unitStagedName(claimId: string, folder: string): string {
  return `${claimId}@${folder}`;
}

export function parseUnitStagedName(staged: string): { claimId: string; folder: string } | undefined {
  const at = staged.indexOf('@');
  if (at <= 0 || at === staged.length - 1) return undefined;
  const claimId = staged.slice(0, at);
  return CLAIM_ID.test(claimId) ? { claimId, folder: staged.slice(at + 1) } : undefined;
}

/**
 * Not data in a marker folder: the marker itself, and what Hadoop's readers skip as hidden (names
 * starting with `_` or `.`: `_SUCCESS`, `_committed_*`, `_started_*`, `_temporary/`, `.part-0.crc`),
 * checksum files `*.crc`, and `*.tmp`. Judged by the last segment; folders by their own name.
 */
export function isUnitExtra(name: string, marker: string): boolean {
  const base = baseName(name);
  return base === marker || base.startsWith('_') || base.startsWith('.') || /\.(crc|tmp)$/i.test(base);
}
