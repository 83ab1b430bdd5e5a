/**
 * A live progress line on a terminal for files that take a while: name, percent read (when
 * hyperwatch streams the file itself), elapsed time, redrawn in place on stderr. Nothing at all when
 * stderr is not a terminal (logs to files,
 * pipes, CI). Log lines clear it before they are written, and it is redrawn on the next tick.
 */

export interface ActiveFile {
  readonly name: string;
  readonly size: number;
  readonly bytesRead: number;
  /** Epoch ms. */
  readonly startedAt: number;
}

/** The part of a stream the progress line uses (`process.stderr`). */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

export interface Progress {
  /** Wraps a line writer so that it clears the progress line first. */
  wrap(write: (line: string) => void): (line: string) => void;
  stop(): void;
}

/** Files shown once they have run this long: short ones would only flicker. */
export const PROGRESS_AFTER_MS = 2000;

function size(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}

/** The text of the line for `files` at `now`, or '' when none is long-running. */
export function progressText(files: readonly ActiveFile[], now: number, width = 100): string {
  const long = files.filter((f) => now - f.startedAt >= PROGRESS_AFTER_MS);
  if (long.length === 0) return '';
  const parts = long.map((f) => {
    const seconds = `${Math.round((now - f.startedAt) / 1000)} s`;
    // A server that reads the file itself (embedded Hyper, CSV) leaves bytesRead at 0: no percent.
    if (f.bytesRead === 0) return `${f.name} (${size(f.size)}), ${seconds}`;
    return `${f.name} ${Math.floor((100 * f.bytesRead) / Math.max(1, f.size))}% of ${size(f.size)}, ${seconds}`;
  });
  const text = `ingesting ${parts.join(' | ')}`;
  return text.length > width - 1 ? `${text.slice(0, width - 2)}…` : text;
}

export function startProgress(stream: ProgressStream, active: () => readonly ActiveFile[], intervalMs = 500): Progress {
  if (!stream.isTTY) return { wrap: (write) => write, stop() {} };
  let shown = false;
  const clear = () => {
    if (shown) stream.write('\r\x1b[2K');
    shown = false;
  };
  const timer = setInterval(() => {
    const text = progressText(active(), Date.now(), stream.columns ?? 100);
    clear();
    if (text) {
      stream.write(text);
      shown = true;
    }
  }, intervalMs);
  // Never keeps the process alive on its own.
  (timer as { unref?: () => void }).unref?.();
  return {
    wrap: (write) => (line) => {
      clear();
      write(line);
    },
    stop() {
      clearInterval(timer);
      clear();
    },
  };
}
