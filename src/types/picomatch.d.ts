/** The part of picomatch (a dependency of @parcel/watcher, kept by micromatch's authors) that select.ts uses; it ships no types. */
declare module 'picomatch' {
  interface PicomatchOptions {
    /** Let `*` match names that begin with a dot. */
    readonly dot?: boolean;
  }
  function picomatch(glob: string | readonly string[], options?: PicomatchOptions): (path: string) => boolean;
  export default picomatch;
}
