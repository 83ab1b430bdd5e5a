/** The project's root folder, for tests that name its files. */
import { basename, dirname, join } from 'node:path';

const above = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');

/**
 * Two folders above test/helpers/; when the tests run compiled (npm test runs them from
 * dist-test/, see scripts/test.mjs) that is dist-test/ itself, and the root is its parent.
 */
export const ROOT = basename(above) === 'dist-test' ? dirname(above) : above;
