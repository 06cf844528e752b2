/**
 * A minimal stand-in for the SMS batch endpoint (`POST /v1/messages/batch/simple/send`), in its own
 * process so its CPU is not charged to the sender under test. It answers exactly like the contract:
 * a batch id, status 0 and one entry per recipient with a message id. It also counts recipients,
 * so the runner can check that every sender delivered every recipient exactly once.
 */
import http from 'node:http';
import { serveChild, signalFailure, signalReady } from '../lib/ipc.js';

let recipients = 0;
let requests = 0;
let batchSeq = 0;
let rejected = 0;

const server = http.createServer((req, res) => {
  if (
    req.method !== 'POST' ||
    req.url !== '/v1/messages/batch/simple/send' ||
    !req.headers.authorization?.startsWith('Basic ')
  ) {
    rejected++;
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not found"}');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let body: { From?: string; Recipients?: string[]; Content?: string };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      rejected++;
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"bad json"}');
      return;
    }
    const list = Array.isArray(body.Recipients) ? body.Recipients : [];
    requests++;
    recipients += list.length;
    const batchId = `b-${++batchSeq}`;
    const data = list.map((recipient, index) => ({
      recipient,
      content: body.Content,
      messageId: `${batchId}-${index}`,
    }));
    const text = JSON.stringify({ batchId, status: 0, data });
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  });
});

server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  serveChild(
    {
      counts: () => ({ recipients, requests, rejected }),
      reset: () => {
        recipients = requests = rejected = 0;
      },
    },
    () => new Promise<void>((resolve) => server.close(() => resolve())),
  );
  signalReady({ port: (server.address() as { port: number }).port });
});
server.on('error', signalFailure);
