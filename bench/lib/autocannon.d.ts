// Minimal typing of the parts of autocannon the harness uses (it ships no types).
declare module 'autocannon' {
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    sent?: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9?: number;
    [key: string]: number | undefined;
  }
  export interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    setupRequest?: (request: any, context: Record<string, any>) => any;
    onResponse?: (
      status: number,
      body: string,
      context: Record<string, any>,
      headers: Record<string, string>,
    ) => void;
  }
  export interface Options extends RequestSpec {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    timeout?: number;
    idReplacement?: boolean;
    overallRate?: number;
    connectionRate?: number;
    requests?: RequestSpec[];
    workers?: number;
    sampleInt?: number;
    bailout?: number;
  }
  export interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    mismatches: number;
    resets: number;
    duration: number;
    '2xx': number;
    '4xx': number;
    '5xx': number;
  }
  export interface Instance extends Promise<Result> {
    stop(): void;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
