#!/usr/bin/env node
/**
 * postinstall: makes sure this machine has a `hyperd`, fetching the pinned build for its platform
 * (Linux x64, macOS arm64, Windows x64) from the npm registry into the user cache, checked, as
 * `hyperwatch install-hyperd` and the first use do (adapters/db/hyper/provision.ts). Never fails
 * the install: without hyperd, hyperwatch fetches it on first use, or says what to do.
 *
 * Plain JavaScript, since it runs before anything is built in a checkout: it takes the built
 * module when there is one (an installed package), else the source through tsx (a checkout,
 * where tsx is a dev dependency).
 */
import process from 'node:process';

const say = (message) => process.stderr.write(`hyperwatch: ${message}\n`);
const logger = { debug() {}, info: say, warn: say, error: say };

async function provision() {
  try {
    return await import('../dist/adapters/db/hyper/provision.js');
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  }
  const { tsImport } = await import('tsx/esm/api');
  return tsImport('../adapters/db/hyper/provision.ts', import.meta.url);
}

try {
  const { hyperdForFirstUse } = await provision();
  await hyperdForFirstUse(undefined, { fetch: true, logger });
} catch (error) {
  say(`${error instanceof Error ? error.message : String(error)} (the install goes on; hyperwatch tries again when it first needs hyperd)`);
}
