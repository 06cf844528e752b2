/** `new Date().toISOString()`, built once per millisecond (many requests share one under load). */
export function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}

let lastMs = Number.NaN;
let lastIso = '';
