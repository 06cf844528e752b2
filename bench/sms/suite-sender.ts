import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SmsModule, SmsService } from 'nestjs-hubtel/sms';
import type { SendJob } from './baseline-loop.js';

export interface SuiteSenderOptions {
  baseUrl: string;
  batchSize: number;
  concurrency: number;
  clientId: string;
  clientSecret: string;
}

/**
 * The suite's SmsService.sendBatch, in a Nest application context configured like a merchant's.
 * Defaults are kept: numbers are validated and normalised, duplicates dropped, and for an array
 * the per-recipient results are collected (the default). For a stream (the 1,000,000 run) the
 * results go to `onBatch` instead, the documented way to keep memory flat.
 */
export async function createSuiteSender(options: SuiteSenderOptions): Promise<{
  send: (job: SendJob) => Promise<{ accepted: number; batches: number }>;
  close: () => Promise<void>;
}> {
  const app: INestApplicationContext = await NestFactory.createApplicationContext(
    SmsModule.forRoot({
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      baseUrl: options.baseUrl,
      batchSize: options.batchSize,
      concurrency: options.concurrency,
    }),
    { logger: ['error', 'warn'] },
  );
  const sms = app.get(SmsService);
  return {
    send: async (job) => {
      const streamed = !Array.isArray(job.recipients);
      const result = await sms.sendBatch({
        from: job.from,
        recipients: job.recipients,
        content: job.content,
        batchSize: job.batchSize,
        concurrency: job.concurrency,
        ...(streamed ? { onBatch: () => undefined } : {}),
      });
      if (result.counts.failed > 0) {
        const reason = result.failed[0]?.reason ?? 'see counts';
        throw new Error(
          `sendBatch failed ${result.counts.failed} of ${result.counts.total} recipients (${reason})`,
        );
      }
      return { accepted: result.counts.sent, batches: result.counts.batches };
    },
    close: () => app.close(),
  };
}
