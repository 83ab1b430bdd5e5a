/**
 * The hyperd builds for macOS arm64 and Windows x64, fetched for real: `npm pack` from the
 * registry (into a folder under the user cache that later runs take them from, checked against
 * the registry's integrity first; about 80 MB each) and unpacked with the checks of
 * `install-hyperd`. Neither binary can run here: what is tested is that the checks accept the
 * real binary and refuse a damaged one (a byte flipped, truncated), another platform's binary,
 * and a damaged tarball. Plus the message on a platform without a build.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFile, open, readdir, readFile, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { binaryFormatOf, hyperdBinaryProblem } from '../../../../adapters/db/hyper/binary-check.ts';
import { fetchHyperd, installFromTarball } from '../../../../adapters/db/hyper/fetch.ts';
import { hyperdMissingMessage, locateHyperd } from '../../../../adapters/db/hyper/locate.ts';
import { HYPERD_BUILDS, HYPERD_PLATFORMS, HYPERD_VERSION, noBuildMessage } from '../../../../adapters/db/hyper/platforms.ts';
import { useTempDir } from '../../../helpers/env.ts';
import { TEST_TARBALLS } from '../../../helpers/hyperd-tarballs.ts';
import { cli } from '../../../helpers/proc.ts';

async function sha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

async function head(path: string, bytes: number): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    await file.read(buffer, 0, bytes, 0);
    return buffer;
  } finally {
    await file.close();
  }
}

/** Flips every bit of the byte at `offset` (twice: back as it was). */
async function flipByte(path: string, offset: number): Promise<void> {
  const file = await open(path, 'r+');
  try {
    const byte = Buffer.alloc(1);
    await file.read(byte, 0, 1, offset);
    byte[0] = byte[0]! ^ 0xff;
    await file.write(byte, 0, 1, offset);
  } finally {
    await file.close();
  }
}

describe('hyperd builds for macOS arm64 and Windows x64, fetched from the npm registry', () => {
  const tmp = useTempDir('hyperwatch-builds-');
  const fetched: Record<string, string> = {};

  for (const platform of ['darwin-arm64', 'win32-x64'] as const) {
    const build = HYPERD_BUILDS[platform];

    it(`${platform}: fetches ${build.package}@${HYPERD_VERSION} and installs ${build.file}, checked`, { timeout: 600_000 }, async () => {
      const lines: string[] = [];
      const started = Date.now();
      const result = await fetchHyperd({ platform, dir: tmp.path(platform), tarballDir: TEST_TARBALLS, report: (l) => lines.push(l) });
      const seconds = (Date.now() - started) / 1000;
      assert.equal(result.path, join(tmp.path(platform), build.file));
      assert.equal(result.fetched, true);
      assert.match(lines.join('\n'), new RegExp(`(fetching|installing) hyperd ${HYPERD_VERSION} for ${platform}`));
      assert.match(lines.at(-1)!, /SHA-256 and file format checked/);
      // Checked again here, by other means than the code under test.
      assert.equal(await sha256(result.path), build.sha256);
      const header = await head(result.path, 512);
      assert.equal(header.length, 512);
      if (platform === 'darwin-arm64') {
        assert.deepEqual([...header.subarray(0, 4)], [0xcf, 0xfa, 0xed, 0xfe], 'Mach-O 64-bit magic');
        assert.equal(header.readUInt32LE(4), 0x0100000c, 'cputype CPU_TYPE_ARM64');
      } else {
        assert.equal(header.toString('latin1', 0, 2), 'MZ');
        const pe = header.readUInt32LE(0x3c);
        assert.equal(header.toString('latin1', pe, pe + 4), 'PE\0\0');
        assert.equal(header.readUInt16LE(pe + 4), 0x8664, 'machine AMD64');
      }
      assert.deepEqual((await readdir(tmp.path(platform))).sort(), ['LICENSE-HYPERD', build.file].sort(), 'no work folder left behind');
      process.stderr.write(`# ${platform}: ${seconds.toFixed(1)} s (${lines.join(' / ')})\n`);
      fetched[platform] = result.path;

      const again = await fetchHyperd({ platform, dir: tmp.path(platform), tarballDir: TEST_TARBALLS });
      assert.equal(again.fetched, false, 'a checked copy is kept, not fetched again');
    });

    it(`${platform}: the check refuses the binary with a byte flipped, its magic flipped, or truncated`, { timeout: 300_000 }, async () => {
      const good = fetched[platform];
      assert.ok(good, 'the fetch test ran first');
      const copy = tmp.path(`${platform}-damaged`);
      await copyFile(good, copy);
      assert.equal(await hyperdBinaryProblem(copy, platform), undefined, 'the copy passes as it is');

      await flipByte(copy, Math.floor(build.bytes / 2));
      assert.match(
        (await hyperdBinaryProblem(copy, platform)) ?? 'passed',
        new RegExp(`has SHA-256 [0-9a-f]{64}, not the pinned ${build.sha256}`),
      );
      await flipByte(copy, Math.floor(build.bytes / 2));

      await flipByte(copy, 0);
      assert.match((await hyperdBinaryProblem(copy, platform)) ?? 'passed', /is not an executable this check knows \(first bytes /);
      await flipByte(copy, 0);
      assert.equal(await hyperdBinaryProblem(copy, platform), undefined, 'restored, it passes again');

      await truncate(copy, build.bytes - 4096);
      assert.match(
        (await hyperdBinaryProblem(copy, platform)) ?? 'passed',
        new RegExp(`is ${build.bytes - 4096} bytes, not the ${build.bytes} .*truncated`),
      );
    });
  }

  it("the check refuses another platform's binary, naming what it is", { timeout: 120_000 }, async () => {
    const mac = fetched['darwin-arm64'];
    const windows = fetched['win32-x64'];
    assert.ok(mac && windows, 'the fetch tests ran first');
    assert.match(
      (await hyperdBinaryProblem(mac, 'win32-x64')) ?? 'passed',
      /is a Mach-O arm64 executable, not a PE x86-64 executable \(\.exe\) as the win32-x64 hyperd is/,
    );
    assert.match((await hyperdBinaryProblem(mac, 'linux-x64')) ?? 'passed', /is a Mach-O arm64 executable, not an ELF x86-64 executable/);
    assert.match(
      (await hyperdBinaryProblem(windows, 'darwin-arm64')) ?? 'passed',
      /is a PE x86-64 executable \(\.exe\), not a Mach-O arm64 executable/,
    );
    const linux = locateHyperd();
    assert.ok(linux.ok, 'the Linux hyperd the suite runs on');
    assert.equal(await hyperdBinaryProblem(linux.path, 'linux-x64'), undefined, 'the Linux binary passes as linux-x64');
    assert.match(
      (await hyperdBinaryProblem(linux.path, 'darwin-arm64')) ?? 'passed',
      /is an ELF x86-64 executable, not a Mach-O arm64 executable/,
    );
  });

  it('a damaged tarball, or the tarball of another platform, is refused before anything is unpacked', { timeout: 300_000 }, async () => {
    const build = HYPERD_BUILDS['win32-x64'];
    const kept = join(TEST_TARBALLS, `${build.package}-${HYPERD_VERSION}.tgz`);
    const damaged = tmp.path('damaged.tgz');
    await copyFile(kept, damaged);
    await flipByte(damaged, 1_000_000);
    const into = await tmp.dir('from-damaged');
    await assert.rejects(installFromTarball(damaged, 'win32-x64', into), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'HYPERD_FETCH_FAILED');
      assert.match(
        error.message,
        new RegExp(
          `is not ${build.package}@${HYPERD_VERSION} as published: its integrity is sha512-\\S+, the ` +
            `registry's ${build.integrity.replace(/[+/]/g, '\\$&')}`,
        ),
      );
      return true;
    });
    const mac = join(TEST_TARBALLS, `${HYPERD_BUILDS['darwin-arm64'].package}-${HYPERD_VERSION}.tgz`);
    await assert.rejects(installFromTarball(mac, 'win32-x64', into), /is not hyperdb-mcp-win32-x64-msvc@0\.7\.3 as published/);
    assert.deepEqual(await readdir(into), [], 'nothing unpacked, no work folder left');
  });
});

describe('platforms without a build', () => {
  it('the message lists the platforms that have one and how to point HYPERD_PATH at a Hyper API install', () => {
    for (const platform of ['linux-arm64', 'darwin-x64', 'win32-arm64']) {
      const message = noBuildMessage(platform);
      assert.match(
        message,
        new RegExp(`^no hyperd build is published for ${platform} \\(there is one for linux-x64, darwin-arm64, win32-x64\\)`),
      );
      const exe = platform.startsWith('win32') ? 'hyperd\\.exe' : 'hyperd';
      assert.match(
        message,
        new RegExp(
          `Set HYPERD_PATH to a hyperd for this machine: a Tableau Hyper API install ships one in its hyper/ folder ` +
            `.*tableauhyperapi/bin/hyper/${exe}\\)`,
        ),
      );
      assert.match(message, /--endpoint host:port/);
      assert.equal(hyperdMissingMessage(platform), `hyperd not found: ${message}`);
    }
    assert.deepEqual(HYPERD_PLATFORMS, ['linux-x64', 'darwin-arm64', 'win32-x64']);
  });

  it('install-hyperd --platform darwin-x64 is a usage error (exit 2) saying so; an unknown --platform too', async () => {
    for (const platform of ['darwin-x64', 'macos']) {
      const run = await cli(['install-hyperd', '--platform', platform]).done;
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, '');
      assert.match(
        run.stderr,
        new RegExp(
          `--platform "${platform}": no hyperd build is published for ${platform} \\(there is one for linux-x64, ` +
            `darwin-arm64, win32-x64\\)\\. Set HYPERD_PATH`,
        ),
      );
    }
  });

  it('binaryFormatOf tells the formats apart from their headers (including other machines)', () => {
    const bytes = (length: number, set: Record<number, number>): Uint8Array => {
      const out = new Uint8Array(length);
      for (const [at, value] of Object.entries(set)) out[Number(at)] = value;
      return out;
    };
    const elf = (machine: number) => bytes(64, { 0: 0x7f, 1: 0x45, 2: 0x4c, 3: 0x46, 4: 2, 5: 1, 18: machine });
    assert.equal(binaryFormatOf(elf(0x3e)), 'elfX64');
    assert.equal(binaryFormatOf(elf(0xb7)), 'an ELF executable for another machine (class 2, machine 0xb7)');
    const macho = (cpu: number[]) => bytes(64, { 0: 0xcf, 1: 0xfa, 2: 0xed, 3: 0xfe, 4: cpu[0]!, 5: cpu[1]!, 6: cpu[2]!, 7: cpu[3]! });
    assert.equal(binaryFormatOf(macho([0x0c, 0, 0, 0x01])), 'machoArm64');
    assert.equal(binaryFormatOf(macho([0x07, 0, 0, 0x01])), 'a Mach-O executable for another CPU (cputype 0x1000007)');
    const pe = (machine: number[]) =>
      bytes(256, { 0: 0x4d, 1: 0x5a, 0x3c: 0x80, 0x80: 0x50, 0x81: 0x45, 0x84: machine[0]!, 0x85: machine[1]! });
    assert.equal(binaryFormatOf(pe([0x64, 0x86])), 'peX64');
    assert.equal(binaryFormatOf(pe([0x64, 0xaa])), 'a PE executable for another machine (0xaa64)');
    assert.equal(binaryFormatOf(bytes(256, { 0: 0x4d, 1: 0x5a })), 'an MZ file without a PE header');
    assert.equal(binaryFormatOf(new Uint8Array(0)), 'not an executable this check knows (first bytes none: the file is empty)');
    assert.equal(binaryFormatOf(new TextEncoder().encode('#!/bin/sh\n')), 'not an executable this check knows (first bytes 23 21 2f 62)');
  });
});
