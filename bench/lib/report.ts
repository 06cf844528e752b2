/** One line of the goals summary: met or not, and by how much. */
export interface Goal {
  area: string;
  goal: string;
  measured: string;
  /** null: not measured (module missing, section skipped), or shown for information (`info`). */
  met: boolean | null;
  /** Measured and shown beside a judged row, but not judged against the goal. */
  info?: boolean;
  margin: string;
}

export interface SectionResult {
  title: string;
  markdown: string;
  goals: Goal[];
}

export function table(header: string[], rows: string[][], align?: ('l' | 'r')[]): string {
  const sep = header.map((_, i) => ((align?.[i] ?? 'r') === 'l' ? ':---' : '---:'));
  return [header, sep, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** "+12% over the goal" / "-8% short of the goal", for goals where bigger is better. */
export function marginAtLeast(value: number, target: number): string {
  if (!Number.isFinite(value)) return 'not measured';
  const pct = ((value - target) / target) * 100;
  return pct >= 0 ? `${pct.toFixed(0)}% above the goal` : `${(-pct).toFixed(0)}% short of the goal`;
}

/** For goals where smaller is better (memory, latency). */
export function marginAtMost(value: number, limit: number): string {
  if (!Number.isFinite(value)) return 'not measured';
  const pct = ((limit - value) / limit) * 100;
  return value <= limit ? `${pct.toFixed(0)}% under the limit` : `${(-pct).toFixed(0)}% over the limit`;
}
