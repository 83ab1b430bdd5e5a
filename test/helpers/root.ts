/** The project's root folder, for tests that name its files. */
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
