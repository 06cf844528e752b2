/*
 * A stand-in programmable service that answers the USSD way (the wire format issue 22's library
 * side sends): menus written into Message as `N. Display` lines, paged with `9. More` / `8. Back`,
 * the cart as `Release` with the `Item`. Plain node:http, so the tools are tested against the
 * format itself, whatever the library does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const STAND_IN_BUNDLES = Array.from({ length: 12 }, (_, i) => ({
  Display: `${i + 1}GB - GHS ${(5 * (i + 1)).toFixed(2)}`,
  Value: `DATA_${i + 1}GB`,
  Amount: 5 * (i + 1),
}));

const PAGE = 4;

export interface UssdStandIn {
  url: string;
  /** Every service-flow request body, oldest first. */
  flowRequests: Record<string, unknown>[];
  /** Every fulfillment request body, oldest first. */
  fulfillments: Record<string, unknown>[];
  /** Where the stand-in posts its fulfillment callbacks (a sandbox's `/callback`). */
  callbackUrl?: string;
  close(): Promise<void>;
}

interface StandInSession {
  step: 'destination' | 'bundle';
  destination?: string;
  page: number;
}

function answer(sessionId: unknown, fields: Record<string, unknown>) {
  return {
    SessionId: sessionId,
    Type: 'Response',
    Message: '',
    Mask: null,
    MaskNextRoute: null,
    Item: null,
    ServiceCode: null,
    Label: null,
    DataType: 'input',
    FieldType: 'text',
    FieldName: null,
    ClientState: null,
    Data: null,
    ...fields,
  };
}

/** The menu screen of one page: prompt, numbered options (1-4 on every page), navigation. */
export function standInMenu(destination: string, page: number): string {
  const options = STAND_IN_BUNDLES.slice(page * PAGE, page * PAGE + PAGE);
  const lines = [`Bundles for ${destination}:`, ...options.map((o, i) => `${i + 1}. ${o.Display}`)];
  if ((page + 1) * PAGE < STAND_IN_BUNDLES.length) lines.push('9. More');
  if (page > 0) lines.push('8. Back');
  return lines.join('\n');
}

/**
 * Starts the stand-in. Service codes: any code runs the bundle flow; `long` answers a first screen
 * of 200 characters; `unicode` one of 80 characters with a non-GSM character (fits 182, not 70).
 */
export async function startUssdStandIn(): Promise<UssdStandIn> {
  const sessions = new Map<string, StandInSession>();
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw || 'null') as Record<string, unknown>;
      const reply = (json: unknown) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (req.url === '/api/fulfillment') {
        standIn.fulfillments.push(body);
        reply({ OrderId: body.OrderId, SessionId: body.SessionId, Status: 'received' });
        if (standIn.callbackUrl)
          void fetch(standIn.callbackUrl, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({
              SessionId: body.SessionId,
              OrderId: body.OrderId,
              ServiceStatus: 'success',
              MetaData: null,
            }),
          }).catch(() => undefined);
        return;
      }
      standIn.flowRequests.push(body);
      const id = String(body.SessionId);
      const type = String(body.Type).toLowerCase();
      const input = String(body.Message ?? '').trim();
      if (type === 'release') return reply(answer(id, { Type: 'Release', Message: 'Goodbye.' }));
      if (type === 'initiation') {
        sessions.set(id, { step: 'destination', page: 0 });
        if (body.ServiceCode === 'long')
          return reply(answer(id, { Message: `${'Long text. '.repeat(18)}End?` }));
        if (body.ServiceCode === 'unicode')
          return reply(answer(id, { Message: `Ɛte sɛn? ${'x'.repeat(70)}` }));
        return reply(
          answer(id, {
            Message: 'Enter the number that gets the data:',
            FieldType: 'phone',
            FieldName: 'destination',
          }),
        );
      }
      const session = sessions.get(id);
      if (!session) return reply(answer(id, { Type: 'Release', Message: 'Session expired.' }));
      if (session.step === 'destination') {
        session.destination = input;
        session.step = 'bundle';
      } else if (input === '9' && (session.page + 1) * PAGE < STAND_IN_BUNDLES.length) {
        session.page++;
      } else if (input === '8' && session.page > 0) {
        session.page--;
      } else {
        const n = Number(input);
        const chosen = /^[1-4]$/.test(input)
          ? STAND_IN_BUNDLES[session.page * PAGE + n - 1]
          : STAND_IN_BUNDLES.find((b) => b.Value === input);
        if (chosen) {
          sessions.delete(id);
          return reply(
            answer(id, {
              Type: 'Release',
              Message: `You are buying ${chosen.Display} for ${session.destination}. Approve the payment prompt.`,
              DataType: 'display',
              FieldType: 'text',
              Item: {
                ItemName: `${chosen.Display.split(' - ')[0]} data bundle`,
                Qty: 1,
                Price: chosen.Amount,
                ServiceData: { destination: session.destination, bundle: chosen.Value },
              },
              Data: [],
            }),
          );
        }
      }
      const options = STAND_IN_BUNDLES.slice(session.page * PAGE, session.page * PAGE + PAGE);
      return reply(
        answer(id, {
          Message: standInMenu(session.destination!, session.page),
          DataType: 'select',
          FieldName: 'bundle',
          Data: options,
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const standIn: UssdStandIn = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    flowRequests: [],
    fulfillments: [],
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return standIn;
}
