/** Bounds several steps share, below all of them (so that none imports another for a number). */

/**
 * Claimed files are held open (the descriptor is what gets read) until their group settles: at
 * most this many across all tasks, so a backlog never runs the process out of descriptors.
 */
export const MAX_OPEN_CLAIMS = 512;

/**
 * Claims and checksums of one batch run this many at a time (a claim can end in writing a .error; a
 * large file is read for its checksum).
 */
export const CLAIM_PARALLEL = 8;
