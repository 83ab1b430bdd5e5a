/**
 * Waiting on something that may never answer (a stalled server, work that does not drain).
 */

/**
 * `promise`'s value, or `undefined` once `ms` passed without it (the work itself goes on; it
 * rejects as `promise` does when that comes first). Its timer is cleared either way.
 */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
