/**
 * The current time as an ISO string, built once per millisecond: under load many requests share
 * a millisecond, and each `new Date().toISOString()` costs a Date, a formatted string and the
 * memory of that string in every record that keeps it. The same text as `new Date().toISOString()`.
 */
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

/** `work`'s result, or `late` once `ms` have passed first (the timer is cleared either way). */
export async function within<T, L>(work: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<L>((resolve) => {
    timer = setTimeout(() => resolve(late), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
