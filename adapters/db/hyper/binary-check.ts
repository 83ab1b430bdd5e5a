/**
 * Checks a hyperd binary against its pinned build before anything may find it: what kind of
 * executable its first bytes say it is, its size, and its SHA-256. The format comes first so
 * that another platform's binary is named as such rather than as a bad checksum.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { BINARY_FORMATS, type BinaryFormat, HYPERD_BUILDS, type HyperdPlatform } from './platforms.ts';

/** Enough of the file to reach a PE header (its offset is in the first 64 bytes, usually < 512). */
const HEADER_BYTES = 4096;

const ELF_MACHINE_X86_64 = 0x3e;
const MACHO_MAGIC_64 = 0xfeedfacf;
const MACHO_CPU_ARM64 = 0x0100000c;
const PE_MACHINE_AMD64 = 0x8664;

/** What the first bytes of a file say it is, in words (used in messages), or its format's key. */
export function binaryFormatOf(header: Uint8Array): BinaryFormat | string {
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  const has = (bytes: number) => header.byteLength >= bytes;
  if (has(20) && header[0] === 0x7f && header[1] === 0x45 && header[2] === 0x4c && header[3] === 0x46) {
    // EI_CLASS 2: 64-bit; EI_DATA 1: little-endian; e_machine at 18.
    if (header[4] === 2 && header[5] === 1 && view.getUint16(18, true) === ELF_MACHINE_X86_64) return 'elfX64';
    return `an ELF executable for another machine (class ${header[4]}, machine 0x${view.getUint16(18, header[5] === 1).toString(16)})`;
  }
  if (has(8) && view.getUint32(0, true) === MACHO_MAGIC_64) {
    const cpu = view.getUint32(4, true);
    return cpu === MACHO_CPU_ARM64 ? 'machoArm64' : `a Mach-O executable for another CPU (cputype 0x${cpu.toString(16)})`;
  }
  if (has(64) && header[0] === 0x4d && header[1] === 0x5a) {
    const pe = view.getUint32(0x3c, true);
    if (!has(pe + 6) || view.getUint32(pe, false) !== 0x50450000) return 'an MZ file without a PE header';
    const machine = view.getUint16(pe + 4, true);
    return machine === PE_MACHINE_AMD64 ? 'peX64' : `a PE executable for another machine (0x${machine.toString(16)})`;
  }
  const shown = [...header.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  return `not an executable this check knows (first bytes ${shown || 'none: the file is empty'})`;
}

function inWords(format: BinaryFormat | string): string {
  return Object.hasOwn(BINARY_FORMATS, format) ? BINARY_FORMATS[format as BinaryFormat] : format;
}

export async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Why the file at `path` is not the pinned hyperd of `platform`, or undefined when it is. */
export async function hyperdBinaryProblem(path: string, platform: HyperdPlatform): Promise<string | undefined> {
  const build = HYPERD_BUILDS[platform];
  const file = await open(path, 'r');
  let size: number;
  let header: Uint8Array;
  try {
    size = (await file.stat()).size;
    const buffer = new Uint8Array(Math.min(HEADER_BYTES, size));
    const { bytesRead } = await file.read(buffer, 0, buffer.byteLength, 0);
    header = buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
  const format = binaryFormatOf(header);
  if (format !== build.format) return `${path} is ${inWords(format)}, not ${inWords(build.format)} as the ${platform} hyperd is`;
  if (size !== build.bytes)
    return (
      `${path} is ${size} bytes, not the ${build.bytes} of hyperd ${platform} ` +
      `(${size < build.bytes ? 'truncated: an interrupted download?' : 'another build'})`
    );
  const digest = await sha256Of(path);
  if (digest !== build.sha256)
    return `${path} has SHA-256 ${digest}, not the pinned ${build.sha256} of hyperd ${platform} (damaged or another build)`;
  return undefined;
}
