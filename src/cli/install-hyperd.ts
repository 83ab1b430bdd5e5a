/** `hyperwatch install-hyperd`: puts a checked hyperd for a platform in the cache or a folder. */
import { resolve } from 'node:path';
import process from 'node:process';
import { fetchHyperd, HYPERD_BUILDS, HYPERD_PLATFORMS, HYPERD_VERSION, locateHyperd } from '../../adapters/db/hyper/index.ts';
import { isHyperdPlatform, noBuildMessage, runningPlatform } from '../../adapters/db/hyper/platforms.ts';
import { parse, UsageError } from './util.ts';

export const INSTALL_HYPERD_HELP = `Usage: hyperwatch install-hyperd [--platform ${HYPERD_PLATFORMS.join('|')}] [--dir <folder>]

Fetches hyperd ${HYPERD_VERSION} for the platform (default: this machine's, ${runningPlatform()}) from
the npm package that ships it, checks it (the tarball's integrity as the registry publishes it,
the binary's size, SHA-256 and file format, all pinned) and puts it in the user cache, where
hyperwatch finds it. Prints the binary's path on stdout.

Options:
  --platform <name>  ${HYPERD_PLATFORMS.map((p) => `${p} (${HYPERD_BUILDS[p].package})`).join(',\n                     ')}
  --dir <folder>     put it in this folder instead (then set HYPERD_PATH to it), e.g. to copy
                     it to a machine that has no npm registry to fetch from
  -h, --help

HYPERWATCH_NO_FETCH does not apply here: this command is the explicit fetch.`;

const line = (text: string) => void process.stderr.write(`hyperwatch: ${text}\n`);

export async function installHyperdCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { platform: { type: 'string' }, dir: { type: 'string' } });
  if (values.help) {
    process.stdout.write(`${INSTALL_HYPERD_HELP}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`install-hyperd takes no arguments, got ${JSON.stringify(positionals[0])}`);
  const platform = values.platform ?? runningPlatform();
  if (!isHyperdPlatform(platform)) {
    // Asked for by name: a usage error; this machine's: nothing to fetch, and what to do instead.
    if (values.platform !== undefined) throw new UsageError(`--platform ${JSON.stringify(platform)}: ${noBuildMessage(platform)}`);
    line(noBuildMessage(platform));
    return 1;
  }
  if (values.dir === undefined && platform === runningPlatform()) {
    const found = locateHyperd();
    if (found.ok) {
      const from =
        found.source === 'HYPERD_PATH'
          ? 'HYPERD_PATH'
          : found.source === 'package'
            ? `the npm package ${HYPERD_BUILDS[platform].package}`
            : 'the user cache';
      line(`hyperd is available at ${found.path} (${from})`);
      process.stdout.write(`${found.path}\n`);
      return 0;
    }
    if (found.explicit) line(`${found.message} It wins over the cache: unset it, or point it at the binary fetched now.`);
  }
  const fetched = await fetchHyperd({ platform, ...(values.dir !== undefined ? { dir: resolve(values.dir) } : {}), report: line });
  if (!fetched.fetched) line(`hyperd ${HYPERD_VERSION} for ${platform} is at ${fetched.path} already (checked)`);
  if (values.dir !== undefined) line(`to use it: HYPERD_PATH=${fetched.path}`);
  process.stdout.write(`${fetched.path}\n`);
  return 0;
}
