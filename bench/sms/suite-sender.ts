import type { SendJob } from './baseline-loop.js';

export interface SuiteSenderOptions {
  baseUrl: string;
  batchSize: number;
  concurrency: number;
  clientId: string;
  clientSecret: string;
}

/** The suite's SmsService.sendBatch — filled in once libs/sms has landed. */
export async function createSuiteSender(options: SuiteSenderOptions): Promise<{
  send: (job: SendJob) => Promise<{ accepted: number; batches: number }>;
  close: () => Promise<void>;
}> {
  throw new Error(`nestjs-hubtel/sms has not landed yet (${options.baseUrl})`);
}
