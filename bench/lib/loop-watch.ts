import { PerformanceObserver, monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** What a replica's event loop went through over a measured window. */
export interface LoopReport {
  /** Event-loop delay p99 and max, ms (a timer's lateness: how long other work held the loop). */
  delayP99Ms: number;
  delayMaxMs: number;
  /** Time in garbage collection, ms, and the longest pause. */
  gcMs: number;
  gcMaxMs: number;
}

/**
 * Watches the event loop of a replica between `start` and `report`: where a latency tail comes
 * from when the CPU is not full (the loop held by long tasks or collector pauses) is told apart
 * from queueing on the CPU.
 */
export class LoopWatch {
  private histogram?: IntervalHistogram;
  private gcMs = 0;
  private gcMaxMs = 0;
  private readonly observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      this.gcMs += entry.duration;
      if (entry.duration > this.gcMaxMs) this.gcMaxMs = entry.duration;
    }
  });

  start(): void {
    this.histogram?.disable();
    this.histogram = monitorEventLoopDelay({ resolution: 5 });
    this.histogram.enable();
    this.gcMs = 0;
    this.gcMaxMs = 0;
    this.observer.disconnect();
    this.observer.observe({ entryTypes: ['gc'] });
  }

  report(): LoopReport {
    const histogram = this.histogram;
    histogram?.disable();
    this.observer.disconnect();
    return {
      delayP99Ms: histogram ? histogram.percentile(99) / 1e6 : NaN,
      delayMaxMs: histogram ? histogram.max / 1e6 : NaN,
      gcMs: this.gcMs,
      gcMaxMs: this.gcMaxMs,
    };
  }
}
