/**
 * One sender run, in a fresh process so its memory high-water is its own: `sender.ts <undici|suite>`.
 * On `send`, it prepares the recipients (an array, or a lazy async iterable), records the memory
 * after setup, sends, and reports time, peak RSS and peak heap (sampled every 5 ms) and their growth.
 */
import { serveChild, signalFailure, signalReady, type Message } from '../lib/ipc.js';
import { sendWithUndici, type SendJob } from './baseline-loop.js';
import { recipientArray, recipientStream } from './recipients.js';

const mode = process.argv[2] as 'undici' | 'suite';
const FROM = 'BenchCo';
const CONTENT = 'Your order 12345 has shipped. Thank you for shopping with BenchCo.';
const CLIENT_ID = 'bench-client';
const CLIENT_SECRET = 'bench-secret-value';

type Sender = (job: SendJob) => Promise<{ accepted: number; batches: number }>;

async function main(): Promise<void> {
  let sender: Sender = sendWithUndici;
  let close: () => Promise<void> = async () => undefined;
  const args = new Map<string, string>();
  for (const arg of process.argv.slice(3)) {
    const [k, v] = arg.split('=');
    args.set(k!, v!);
  }
  const baseUrl = args.get('baseUrl')!;
  const batchSize = Number(args.get('batchSize'));
  const concurrency = Number(args.get('concurrency'));
  if (mode === 'suite') {
    const { createSuiteSender } = await import('./suite-sender.js');
    const suite = await createSuiteSender({
      baseUrl,
      batchSize,
      concurrency,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
    });
    sender = suite.send;
    close = suite.close;
  }

  serveChild(
    {
      send: async (message: Message) => {
        const count = Number(message.count);
        const lazy = message.lazy === true;
        const recipients = lazy ? recipientStream(count) : recipientArray(count);
        (globalThis as { gc?: () => void }).gc?.();
        const before = process.memoryUsage();
        let peakRss = before.rss;
        let peakHeap = before.heapUsed;
        const sample = setInterval(() => {
          const now = process.memoryUsage();
          if (now.rss > peakRss) peakRss = now.rss;
          if (now.heapUsed > peakHeap) peakHeap = now.heapUsed;
        }, 5);
        const startUs = Number(process.hrtime.bigint() / 1000n);
        const cpuBefore = process.cpuUsage();
        const started = process.hrtime.bigint();
        const result = await sender({
          baseUrl,
          recipients,
          batchSize,
          concurrency,
          from: FROM,
          content: CONTENT,
          authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
        });
        const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
        const cpu = process.cpuUsage(cpuBefore);
        clearInterval(sample);
        const after = process.memoryUsage();
        peakRss = Math.max(peakRss, after.rss);
        peakHeap = Math.max(peakHeap, after.heapUsed);
        return {
          ...result,
          elapsedMs,
          cpuMs: (cpu.user + cpu.system) / 1000,
          rssBefore: before.rss,
          heapBefore: before.heapUsed,
          peakRss,
          peakHeap,
          // On the clock of --cpu-prof timestamps, to cut a profile to the send.
          window: { startUs, endUs: Number(process.hrtime.bigint() / 1000n) },
        };
      },
    },
    close,
  );
  signalReady();
}

main().catch(signalFailure);
