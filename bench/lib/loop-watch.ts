import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import {
  PerformanceObserver,
  constants,
  monitorEventLoopDelay,
  type IntervalHistogram,
} from 'node:perf_hooks';

/** What a replica's event loop went through over a measured window. */
export interface LoopReport {
  /** Event-loop delay p99 and max, ms (a timer's lateness: how long other work held the loop). */
  delayP99Ms: number;
  delayMaxMs: number;
  /** Time in garbage collection, ms, and the longest pause. */
  gcMs: number;
  gcMaxMs: number;
  /** Collector time by kind, ms: scavenges (young generation) and mark-compacts (the whole heap). */
  gcMinorMs: number;
  gcMajorMs: number;
  /** Heap in use when the window ended, MB. */
  heapUsedMb: number;
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
  private gcMinorMs = 0;
  private gcMajorMs = 0;
  private readonly observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      this.gcMs += entry.duration;
      if (entry.duration > this.gcMaxMs) this.gcMaxMs = entry.duration;
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) this.gcMinorMs += entry.duration;
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) this.gcMajorMs += entry.duration;
    }
  });

  start(): void {
    startAllocationSampling();
    this.histogram?.disable();
    this.histogram = monitorEventLoopDelay({ resolution: 5 });
    this.histogram.enable();
    this.gcMs = 0;
    this.gcMaxMs = 0;
    this.gcMinorMs = 0;
    this.gcMajorMs = 0;
    this.observer.disconnect();
    this.observer.observe({ entryTypes: ['gc'] });
  }

  report(): LoopReport {
    stopAllocationSampling();
    const histogram = this.histogram;
    histogram?.disable();
    this.observer.disconnect();
    return {
      delayP99Ms: histogram ? histogram.percentile(99) / 1e6 : NaN,
      delayMaxMs: histogram ? histogram.max / 1e6 : NaN,
      gcMs: this.gcMs,
      gcMaxMs: this.gcMaxMs,
      gcMinorMs: this.gcMinorMs,
      gcMajorMs: this.gcMajorMs,
      heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20,
    };
  }
}

/*
 * BENCH_ALLOC_PROFILE=<dir>: a sampled profile of everything the replica allocated over the
 * window, collected or not (what the collector's time per request comes from), written as
 * <dir>/<pid>.heapprofile (Chrome DevTools reads it). `--heap-prof` keeps only what survived.
 */
const allocDir = process.env.BENCH_ALLOC_PROFILE;
let allocSession: Session | undefined;

function startAllocationSampling(): void {
  if (!allocDir || allocSession) return;
  allocSession = new Session();
  allocSession.connect();
  allocSession.post('HeapProfiler.startSampling', {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}

function stopAllocationSampling(): void {
  const session = allocSession;
  if (!session) return;
  allocSession = undefined;
  session.post('HeapProfiler.stopSampling', (error, result) => {
    if (!error) writeFileSync(`${allocDir}/${process.pid}.heapprofile`, JSON.stringify(result.profile));
    session.disconnect();
  });
}
