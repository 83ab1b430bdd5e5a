/**
 * The hyperd builds hyperwatch can fetch, one per platform, each pinned to the npm package that
 * ships it: the tarball's integrity as the registry publishes it, and the binary's own size and
 * SHA-256, so what lands on disk is exactly what was checked here. No build is published for
 * Linux arm64 or macOS x64 (the packages of 0.7.3 cover these three).
 */
import process from 'node:process';

/** The version of every package below (Hyper 9.1.0). */
export const HYPERD_VERSION = '0.7.3';

/** What a binary's first bytes must say: ELF x86-64, Mach-O arm64, PE x86-64. */
export const BINARY_FORMATS = {
  elfX64: 'an ELF x86-64 executable',
  machoArm64: 'a Mach-O arm64 executable',
  peX64: 'a PE x86-64 executable (.exe)',
} as const;
export type BinaryFormat = keyof typeof BINARY_FORMATS;

export interface HyperdBuild {
  /** The npm package that ships it, at HYPERD_VERSION. */
  readonly package: string;
  /** `sha512-...` of the tarball (`npm view <package>@<version> dist.integrity`). */
  readonly integrity: string;
  /** The tarball's size, for the progress line. */
  readonly tarballBytes: number;
  /** The binary's path inside the tarball. */
  readonly entry: string;
  /** The binary's file name once installed. */
  readonly file: string;
  readonly bytes: number;
  /** Hex SHA-256 of the binary. */
  readonly sha256: string;
  readonly format: BinaryFormat;
}

export const HYPERD_BUILDS = {
  'linux-x64': {
    package: 'hyperdb-api-node-linux-x64-gnu',
    integrity: 'sha512-EoYn8uDZVS09yc0saXXHBQRNJ+W6FO/r4qKjIXx7HcyZ8Sdnbu/Mohz+mEgqtnIQ8luMhJaxyhUFRQYt8oNhkA==',
    tarballBytes: 82_961_554,
    entry: 'package/hyperd',
    file: 'hyperd',
    bytes: 255_750_496,
    sha256: 'c5e49397a8773f9a910b259ddeeda4e6c0c02868449dc054016b7531d3798288',
    format: 'elfX64',
  },
  'darwin-arm64': {
    package: 'hyperdb-mcp-darwin-arm64',
    integrity: 'sha512-XukAFvIAG+CnOT37RORN/tMOhLj0GHbriKFPn89wJicefpnZ/h+jBx92RPZJCYKgFHgzyLNFn1pkw+YMaEQFpg==',
    tarballBytes: 81_659_950,
    entry: 'package/hyperd',
    file: 'hyperd',
    bytes: 276_051_984,
    sha256: 'e396c61c4dee5d71fc903571a7c480e54884c6dfd528a9c8e89c2983ecbe3450',
    format: 'machoArm64',
  },
  'win32-x64': {
    package: 'hyperdb-mcp-win32-x64-msvc',
    integrity: 'sha512-UNF8iYhAhkIo3ShwZg5uoGKKe2e6ggvSFpqf6UaSDFFBJIrewqVTp6ViyB1WOeaQWf+FoRSylPJl98bzVwatWg==',
    tarballBytes: 74_120_899,
    entry: 'package/hyperd.exe',
    file: 'hyperd.exe',
    bytes: 218_159_104,
    sha256: '8201b46c890a3c671c21f427823711451394c69aee6a95d4f72ff15e92c012be',
    format: 'peX64',
  },
} as const satisfies Record<string, HyperdBuild>;

export type HyperdPlatform = keyof typeof HYPERD_BUILDS;
export const HYPERD_PLATFORMS = Object.keys(HYPERD_BUILDS) as HyperdPlatform[];

export function isHyperdPlatform(name: string): name is HyperdPlatform {
  return Object.hasOwn(HYPERD_BUILDS, name);
}

/** `linux-x64`, `darwin-arm64`, ...: the running platform's name, as `--platform` takes it. */
export function runningPlatform(): string {
  return `${process.platform}-${process.arch}`;
}

/** What to do on a platform without a build: which ones have one, and where else hyperd comes from. */
export function noBuildMessage(platform: string): string {
  const exe = platform.startsWith('win32') ? 'hyperd.exe' : 'hyperd';
  return (
    `no hyperd build is published for ${platform} (there is one for ${HYPERD_PLATFORMS.join(', ')}). ` +
    `Set HYPERD_PATH to a hyperd for this machine: a Tableau Hyper API install ships one in its hyper/ folder ` +
    `(Python: pip install tableauhyperapi, then HYPERD_PATH=.../site-packages/tableauhyperapi/bin/hyper/${exe}); ` +
    `or connect to a running hyperd with --endpoint host:port.`
  );
}
