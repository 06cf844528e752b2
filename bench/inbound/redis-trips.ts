import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';

/** One Redis command as the store's client sent it. */
export interface SentCommand {
  /** Command name; a store script (EVALSHA) by the name it was defined under. */
  name: string;
  /** First key, with the request's ids replaced by `<id>` (the same for every request). */
  key: string;
  /** True when sent in the same tick as the previous one of a pipeline / MULTI (no round trip of its own). */
  pipelined: boolean;
  /** Other commands of this request still waiting for their reply when this one was sent. */
  overlapping: number;
  /**
   * Sent by a run of the job (the BullMQ worker's: read the record, dispatch to the host handler,
   * write the outcome), which the answer never awaits: seen by the worker's or the pipeline's
   * `execute` frame on the command's (async) stack; a pass of checkout's reconciler is counted here too.
   */
  job: boolean;
}

/** The commands one request caused, split at the moment its answer was written. */
export interface RequestTrips {
  path: string;
  status: number;
  beforeAck: SentCommand[];
  afterAck: SentCommand[];
}

// Ids of the bench (see lib/shapes.ts): `<prefix><n>` with prefix `b<tag><shape letter>-`.
const BENCH_ID = /b[0-9a-z]+-\d+/g;
// A run of a job (libs/core/src/inbound/inbound-pipeline.ts `execute`), on the BullMQ worker
// (libs/bullmq/src/bullmq.job-runner.ts `process`, BullMQ's own `Worker` frames): never awaited by
// the answer; so is a pass of checkout's reconciler (on with `posSalesId`: a repeated task of the
// runner). The request's own commands (the record's set-if-absent, the BullMQ add, the endpoint's
// reads) have none of these frames on their stack.
const JOB_FRAME =
  /\bInboundPipeline\.execute\b|\bBullmqJobRunner\.process\b|\bCheckoutReconciler\.(runOnce|reconcile)\b|\bWorker\.(processJob|callProcessJob|mainLoop|retryIfFailed|moveToActive|getNextJob|nextJobFromJobData)\b/;

/**
 * Counts the Redis round trips of each request of a Redis-store (d) server, in the server's
 * process: every command the store's ioredis client sends (`sendCommand`, which ioredis's own
 * commands, scripts and pipelines all go through) is charged to the request in flight, before or
 * after its answer (`res.end`). Meant for requests sent one at a time: it keeps one current
 * request. A pipeline or MULTI counts as one round trip (its commands are sent in one tick with a
 * stream argument). Off until `start`, so it costs nothing in the throughput runs.
 */
export class RoundTripRecorder {
  private recording = false;
  private current?: RequestTrips;
  private phase: 'beforeAck' | 'afterAck' = 'beforeAck';
  private inFlight = 0;
  private pipelineTick = false;
  private requests: RequestTrips[] = [];
  private readonly scripts = new Map<string, string>();
  private readonly onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const trips: RequestTrips = { path: req.url ?? '', status: 0, beforeAck: [], afterAck: [] };
    this.requests.push(trips);
    this.current = trips;
    this.phase = 'beforeAck';
    this.inFlight = 0;
    const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
    // The acknowledgement: the answer handed to the socket. Commands sent after this call
    // (recording, dispatch to the host handler) do not delay it.
    res.end = ((...args: unknown[]) => {
      if (this.current === trips) this.phase = 'afterAck';
      trips.status = res.statusCode;
      return end(...args);
    }) as ServerResponse['end'];
  };

  private readonly clients: Redis[];

  constructor(
    clients: Redis | Redis[],
    private readonly server: Server,
  ) {
    // Several clients (the store's, and BullMQ queues'): a request's round trips on any of them.
    this.clients = Array.isArray(clients) ? clients : [clients];
    for (const client of this.clients) {
      const send = client.sendCommand.bind(client);
      client.sendCommand = ((command, stream, ...rest) => {
        if (this.recording && this.current) this.note(command, stream !== undefined);
        return send(command, stream, ...rest);
      }) as Redis['sendCommand'];
    }
  }

  start(): void {
    this.requests = [];
    this.current = undefined;
    this.recording = true;
    // First listener: runs before the framework's own handler, so nothing of the request is missed.
    this.server.prependListener('request', this.onRequest);
  }

  stop(): RequestTrips[] {
    this.recording = false;
    this.server.removeListener('request', this.onRequest);
    return this.requests;
  }

  private note(
    command: { name: string; args: unknown[]; promise: Promise<unknown> },
    pipelined: boolean,
  ): void {
    const trips = this.current!;
    let name = command.name;
    let key = command.args[0];
    if (name === 'evalsha' || name === 'eval') {
      name =
        name === 'evalsha' ? `EVALSHA ${this.scriptName(String(command.args[0]))}` : 'EVAL (script resent)';
      key = command.args[2];
    } else name = name.toUpperCase();
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 60;
    const stack = new Error().stack ?? '';
    Error.stackTraceLimit = limit;
    const sent: SentCommand = {
      name,
      key: String(key ?? '').replace(BENCH_ID, '<id>'),
      pipelined: pipelined && this.pipelineTick,
      overlapping: this.inFlight,
      job: JOB_FRAME.test(stack),
    };
    if (pipelined && !this.pipelineTick) {
      this.pipelineTick = true;
      queueMicrotask(() => (this.pipelineTick = false));
    }
    trips[this.phase].push(sent);
    // Only the request's own commands are "its others in flight": a job's run (this request's, or
    // the one before's still going on a loaded machine) waits on nothing of the request's.
    if (sent.job) return;
    this.inFlight++;
    const done = () => {
      if (this.current === trips) this.inFlight--;
    };
    command.promise.then(done, done);
  }

  private scriptName(sha: string): string {
    if (!this.scripts.has(sha))
      for (const client of this.clients) {
        const defined = (client as unknown as { scriptsSet: Record<string, { sha: string }> }).scriptsSet;
        for (const [scriptName, script] of Object.entries(defined ?? {}))
          this.scripts.set(script.sha, scriptName);
      }
    return this.scripts.get(sha) ?? sha.slice(0, 8);
  }
}
