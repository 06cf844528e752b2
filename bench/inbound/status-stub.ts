import { createServer, type Server } from 'node:http';

/** The amount of every invoice the bench prepares (bench/inbound/host-app.ts `seedInvoices`). */
const INVOICE_AMOUNT = 0.5;

/**
 * A stand-in for the transaction status API on 127.0.0.1, so that a checkout server configured
 * with `posSalesId` (status check on, the default then) confirms its callbacks without reaching any
 * real network. It answers `GET /transactions/{posSalesId}/status?clientReference=<ref>` (the path
 * of libs/core/src/http/transaction-status.ts) with the documented envelope of a paid transaction
 * for that reference and the bench invoices' amount; anything else is a 404.
 */
export class StatusStub {
  /** Status requests answered "Paid". */
  paid = 0;
  /** Requests answered 404 (none expected). */
  unknown = 0;
  /** Base URL for `baseUrls.status` (and `baseUrls.checkout`): `http://127.0.0.1:<port>`. */
  url = '';
  private readonly server: Server;

  private constructor() {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const reference = url.searchParams.get('clientReference');
      if (req.method !== 'GET' || !/^\/transactions\/[^/]+\/status$/.test(url.pathname) || !reference) {
        this.unknown++;
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'Not found', responseCode: '4040' }));
        return;
      }
      this.paid++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          message: 'Successful',
          responseCode: '0000',
          data: {
            date: new Date().toISOString(),
            status: 'Paid',
            transactionId: `tx-${reference}`,
            externalTransactionId: `ext-${reference}`,
            paymentMethod: 'mobilemoney',
            clientReference: reference,
            currencyCode: null,
            isFulfilled: null,
            amount: INVOICE_AMOUNT,
            charges: 0.01,
            amountAfterCharges: INVOICE_AMOUNT - 0.01,
          },
        }),
      );
    });
  }

  static async start(): Promise<StatusStub> {
    const stub = new StatusStub();
    await new Promise<void>((resolve, reject) => {
      stub.server.once('error', reject);
      stub.server.listen(0, '127.0.0.1', resolve);
    });
    stub.url = `http://127.0.0.1:${(stub.server.address() as { port: number }).port}`;
    return stub;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
