import http from 'node:http';
import { serviceFlowReply } from '../lib/shapes.js';

/** Baseline (a): node:http, JSON.parse of the same body, the same answer. No framework at all. */
export function createBareServer(): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"statusCode":400}');
        return;
      }
      let reply: unknown;
      if (req.url === '/hubtel/checkout/callback') reply = { received: true, key: body?.Data?.CheckoutId };
      else if (req.url === '/api/service-flow') reply = serviceFlowReply(body?.SessionId);
      else if (req.url === '/api/fulfillment') reply = { received: true, key: body?.OrderId };
      else {
        res.writeHead(404).end();
        return;
      }
      const text = JSON.stringify(reply);
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    });
  });
}
