/**
 * Renders rows as an aligned plain-text table (header in capitals, two spaces between columns,
 * columns listed in `right` aligned right, for numbers). Returns the lines.
 */
export function renderTable(header: string[], rows: string[][], right: number[] = []): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right.includes(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header.map((h) => h.toUpperCase())), ...rows.map(line)];
}

/** Bytes as a short human size: 812 B, 14.2 KB, 2.4 MB. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Seconds as a short duration: 45 s, 30 min, 24 h, 7 d. */
export function formatDuration(seconds: number): string {
  if (seconds % 86_400 === 0 && seconds > 86_400) return `${seconds / 86_400} d`;
  if (seconds % 3600 === 0 && seconds > 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0 && seconds > 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
