// Type declarations for the untyped compressors the conformance suite writes Arrow files with.
declare module 'lz4js' {
  export function compress(data: Uint8Array): Uint8Array;
}
declare module 'zstd-codec' {
  export const ZstdCodec: {
    run(callback: (zstd: { Simple: new () => { compress(data: Uint8Array, level?: number): Uint8Array } }) => void): void;
  };
}
