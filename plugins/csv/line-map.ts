/**
 * Lines of the stream sent to the database, and lines of the file: they differ by the lines
 * dropped on the way (a preamble, comments, blank lines at the end).
 */
export class LineMap {
  readonly #drops: [at: number, count: number][] = [];

  /** `count` lines of the file were dropped just before the stream's line `at`. */
  drop(at: number, count: number): void {
    const last = this.#drops.at(-1);
    if (last && last[0] === at) last[1] += count;
    else this.#drops.push([at, count]);
  }

  /** The file's line that the stream's line `line` is. */
  fileLine(line: number): number {
    let file = line;
    for (const [at, count] of this.#drops) if (at <= line) file += count;
    return file;
  }

  get dropped(): boolean {
    return this.#drops.length > 0;
  }
}
