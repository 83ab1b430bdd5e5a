/** The Prometheus text format as /metrics writes it, read back into samples for the tests to check. */
import assert from 'node:assert/strict';

/** One sample of the Prometheus text: name, labels, value. */
export interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1]!, labels, value: match[3] === '+Inf' ? Infinity : Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample of `name` with these labels; fails unless there is exactly one. */
export function metric(samples: readonly Sample[], name: string, labels: Record<string, string>): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.equal(found.length, 1, `exactly one sample of ${name} ${JSON.stringify(labels)}`);
  return found[0]!.value;
}
