/** One sample of the Prometheus text exposition format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the samples of a /metrics body (comments and blank lines skipped). */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/**
 * The sum of the samples named `name` whose labels include `labels` (undefined when none
 * matches, so "absent" and "zero" stay distinguishable).
 */
export function valueOf(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const matching = parseSamples(text).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.length ? matching.reduce((n, s) => n + s.value, 0) : undefined;
}
