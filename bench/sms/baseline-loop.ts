import { request, Agent } from 'undici';

export interface SendJob {
  baseUrl: string;
  recipients: Iterable<string> | AsyncIterable<string>;
  batchSize: number;
  concurrency: number;
  from: string;
  content: string;
  authorization: string;
}

/**
 * The hand-written loop a user would write instead of the suite: `concurrency` workers, each taking
 * the next `batchSize` recipients and POSTing them with undici.request, reading the answer.
 * No validation, no retries, no per-recipient results kept beyond counting them.
 */
export async function sendWithUndici(job: SendJob): Promise<{ accepted: number; batches: number }> {
  const dispatcher = new Agent({ connections: job.concurrency, keepAliveTimeout: 30_000 });
  const source = (
    Symbol.asyncIterator in job.recipients
      ? (job.recipients as AsyncIterable<string>)[Symbol.asyncIterator]()
      : (job.recipients as Iterable<string>)[Symbol.iterator]()
  ) as AsyncIterator<string> | Iterator<string>;
  let done = false;
  // Workers pull batches one at a time from the shared source.
  let pulling: Promise<string[]> = Promise.resolve([]);
  const nextBatch = (): Promise<string[]> => {
    pulling = pulling.then(async () => {
      const batch: string[] = [];
      while (!done && batch.length < job.batchSize) {
        const step = await source.next();
        if (step.done) done = true;
        else batch.push(step.value);
      }
      return batch;
    });
    return pulling;
  };
  let accepted = 0;
  let batches = 0;
  const url = `${job.baseUrl}/v1/messages/batch/simple/send`;
  const worker = async () => {
    for (;;) {
      const batch = await nextBatch();
      if (batch.length === 0) return;
      const { statusCode, body } = await request(url, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json', authorization: job.authorization },
        body: JSON.stringify({ From: job.from, Recipients: batch, Content: job.content }),
      });
      const answer = (await body.json()) as { data?: unknown[] };
      if (statusCode !== 200) throw new Error(`SMS API answered ${statusCode}`);
      accepted += answer.data?.length ?? 0;
      batches++;
    }
  };
  try {
    await Promise.all(Array.from({ length: job.concurrency }, worker));
  } finally {
    await dispatcher.close();
  }
  return { accepted, batches };
}
