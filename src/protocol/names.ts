/** Names of the sentinel protocol: which entries are sentinels, which are ignored, claim names. */
import { READY_SUFFIX } from '../constants.ts';

/** In-progress files by convention: dot-files (the watcher's own folder too) and `*.tmp`. */
export function isIgnoredName(name: string): boolean {
  return name.startsWith('.') || name.toLowerCase().endsWith('.tmp');
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

/** Staged name of a claimed file: `<claimId>~<original name>`. */
export function stagedName(claimId: string, name: string): string {
  return `${claimId}~${name}`;
}

export function parseStagedName(staged: string): { claimId: string; name: string } | undefined {
  const at = staged.indexOf('~');
  if (at <= 0 || at === staged.length - 1) return undefined;
  return { claimId: staged.slice(0, at), name: staged.slice(at + 1) };
}

/**
 * A name in `failed/` that does not collide with an earlier failure: the original when free,
 * else the claim id inserted before the extension (`orders.csv` → `orders.<claimId>.csv`).
 */
export function failedNameCandidates(name: string, claimId: string, extension: string): [string, string] {
  const ext = extension && name.toLowerCase().endsWith(extension) ? name.slice(name.length - extension.length) : '';
  return [name, `${name.slice(0, name.length - ext.length)}.${claimId}${ext}`];
}
