/**
 * A real Nest app (Express, Nest's own ConsoleLogger, every level on) with the sandbox, SMS,
 * checkout and service-app modules, run as its own process by test/log-capture.e2e-spec.ts,
 * which reads what it prints. It makes each module write warnings and debug lines the way a
 * production app would meet them: retries after platform faults, a failed batch, a refused and a
 * duplicate callback, an unknown service code, a forged fulfillment request, a callback the app
 * answers 404, forged callbacks whose reference is a phone number split by invisible characters,
 * slashes, underscores or tabs. Prints `LOG-CAPTURE DONE` last.
 *
 * The credentials and phone numbers come from the environment (LOG_CAPTURE_*), so the test knows
 * exactly which strings must never appear.
 */
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { CheckoutModule, CheckoutService } from 'nestjs-hubtel/checkout';
import { HubtelSandbox, SandboxModule } from 'nestjs-hubtel/sandbox';
import { basicAuthHeader } from '../../libs/sandbox/src/sandbox.http.js';
import {
  FlowContext,
  FlowStep,
  OnFulfillment,
  ServiceAppModule,
  ServiceFlow,
  type FulfillmentRequestedEvent,
} from 'nestjs-hubtel/service-app';
import { SmsModule, SmsService } from 'nestjs-hubtel/sms';
import {
  buildCheckoutCallback,
  buildFulfillmentRequest,
  sendCheckoutCallback,
  sendFulfillmentRequest,
} from 'nestjs-hubtel/testing';
import { freePort } from './redis-server.js';

const env = (key: string): string => {
  const value = process.env[key];
  if (!value) throw new Error(`${key} is not set`);
  return value;
};
const credentials = {
  sms: { clientId: env('LOG_CAPTURE_SMS_ID'), clientSecret: env('LOG_CAPTURE_SMS_SECRET') },
  api: { clientId: env('LOG_CAPTURE_API_ID'), clientSecret: env('LOG_CAPTURE_API_SECRET') },
};
const phones = env('LOG_CAPTURE_PHONES').split(',');
const fast = { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } };
/** What a forger puts between a number's digits (see the test). */
const SPLITTERS = ['\u200b', '\u2060\u200d', '/', '_', '\t'];

@ServiceFlow({ serviceCode: '711' })
class BundleFlow {
  @FlowStep()
  cart(ctx: FlowContext) {
    return ctx.addToCart({
      message: 'Buy 1GB for GHS 5.00?',
      item: { ItemName: '1GB', Qty: 1, Price: 5 },
    });
  }
}

@Injectable()
class Deliveries {
  @OnFulfillment()
  deliver(order: FulfillmentRequestedEvent) {
    return order.orderId;
  }
}

async function main(): Promise<void> {
  const port = await freePort();
  const appUrl = `http://127.0.0.1:${port}`;

  @Module({
    imports: [
      EventEmitterModule.forRoot(),
      SandboxModule.forRoot({ port: 0, credentials, isGlobal: true }),
      SmsModule.forRootAsync({
        inject: [HubtelSandbox],
        useFactory: (sandbox: HubtelSandbox) => ({
          ...credentials.sms,
          baseUrl: sandbox.baseUrls().sms,
          ...fast,
          batchSize: 1,
          concurrency: 1,
        }),
      }),
      CheckoutModule.forRootAsync({
        inject: [HubtelSandbox],
        useFactory: (sandbox: HubtelSandbox) => ({
          ...credentials.api,
          baseUrls: { checkout: sandbox.baseUrls().checkout, status: sandbox.baseUrls().status },
          posSalesId: sandbox.posSalesId,
          publicBaseUrl: appUrl,
          returnUrl: `${appUrl}/return`,
          cancellationUrl: `${appUrl}/cancel`,
          ...fast,
        }),
      }),
      ServiceAppModule.forRootAsync({
        inject: [HubtelSandbox],
        useFactory: (sandbox: HubtelSandbox) => ({
          callbackUrl: sandbox.baseUrls().fulfillmentCallback,
          statusCheck: { ...credentials.api, posSalesId: sandbox.posSalesId, url: sandbox.baseUrls().status },
        }),
      }),
    ],
    providers: [BundleFlow, Deliveries],
  })
  class LogCaptureModule {}

  // Nest's own ConsoleLogger, every level on: what an app started with `logger: [...]` prints.
  const app: INestApplication = await NestFactory.create(LogCaptureModule, {
    logger: ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'],
  });
  await app.listen(port, '127.0.0.1');
  const sandbox = app.get(HubtelSandbox);
  const sms = app.get(SmsService);
  const checkout = app.get(CheckoutService);

  // SMS: a 503 retried (transport warning), a batch the platform refuses (runner warning).
  sandbox.faults.add({ match: { path: '/v1/messages/send' }, status: 503, times: 1 });
  await sms.send({ from: 'Shop', to: phones[0]!, content: 'Your code is 1234' });
  sandbox.faults.add({ match: { path: '/v1/messages/batch/simple/send' }, status: 400, times: 1 });
  await sms.sendBatch({ from: 'Shop', recipients: [phones[1]!, phones[0]!], content: 'Sale today' });

  // Checkout: a 503 on initiate retried, a paid invoice with a duplicated callback, a callback
  // with a tampered amount.
  sandbox.faults.add({ match: { path: '/items/initiate' }, status: 503, times: 1 });
  const paid = await checkout.createInvoice({
    totalAmount: 12.5,
    description: 'Kente mug',
    payeeMobileNumber: phones[0]!,
  });
  await sandbox.pay(paid.clientReference, { phone: phones[0]!, fault: { duplicate: 2 } });
  const tampered = await checkout.createInvoice({ totalAmount: 30, description: 'Shea soap' });
  await sandbox.pay(tampered.clientReference, { phone: phones[1]!, fault: { amount: 1 } });
  await checkout.drain();

  // Sandbox: a callback the app answers 404 (an invoice created by hand with a wrong callback URL).
  const initiated = await fetch(`${sandbox.baseUrls().checkout}/items/initiate`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Authorization: basicAuthHeader(credentials.api),
    },
    body: JSON.stringify({
      totalAmount: 1,
      description: 'Lost callback',
      callbackUrl: `${appUrl}/nowhere`,
      returnUrl: `${appUrl}/return`,
      cancellationUrl: `${appUrl}/cancel`,
      merchantAccountNumber: sandbox.posSalesId,
      clientReference: 'lost-callback',
    }),
  });
  const lost = (await initiated.json()) as { data: { clientReference: string } };
  await sandbox.pay(lost.data.clientReference, { phone: phones[1]! });

  // Checkout: forged callbacks whose ClientReference is a phone number split by zero-width
  // characters, "/", "_" or tabs (each logged as UNKNOWN_REFERENCE).
  const digits = phones[0]!;
  for (const separator of SPLITTERS) {
    const clientReference = [digits.slice(0, 3), digits.slice(3, 6), digits.slice(6)].join(separator);
    await sendCheckoutCallback(appUrl, buildCheckoutCallback({ clientReference, amount: 1 }));
  }
  await checkout.drain();

  // Service app: an unknown service code, a paid session whose fulfillment callback is sent, a
  // forged (unpaid) fulfillment request.
  await sandbox.serviceApp(appUrl, { serviceCode: '999', mobile: phones[1]! }).start();
  const session = sandbox.serviceApp(appUrl, { serviceCode: '711', mobile: phones[0]! });
  await session.start();
  await session.pay();
  await session.waitForCallback();
  await sendFulfillmentRequest(
    appUrl,
    buildFulfillmentRequest({ sessionId: 'forged-session', orderId: 'forged-order' }),
  );

  await app.close();
  process.stdout.write('LOG-CAPTURE DONE\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`LOG-CAPTURE FAILED ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
