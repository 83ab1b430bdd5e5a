/**
 * Where the tests keep the hyperd tarballs they fetch with `npm pack` (about 80 MB each), so that a
 * second run (CI's cache of the user cache folder) does not download them again. fetchHyperd
 * checks a kept tarball against the registry's integrity before it uses it.
 */
import { join } from 'node:path';
import { cacheDir } from '../../adapters/db/hyper/locate.ts';

export const TEST_TARBALLS = join(cacheDir(), 'test-tarballs');
