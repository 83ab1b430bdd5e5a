/**
 * `Promise.all(items.map(fn))` with at most `limit` calls running at once: file system calls go
 * through a small thread pool, so a few in parallel hide their latency, and a bound keeps open
 * descriptors and buffers in check.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
