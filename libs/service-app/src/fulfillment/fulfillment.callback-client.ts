import { Inject, Injectable } from '@nestjs/common';
import { HubtelError } from 'nestjs-hubtel';
import { type HttpTransport } from '#internal';
import { SERVICE_APP_TRANSPORT } from '../service-app.constants.js';
import type { FulfillmentCallback } from '../service-app.types.js';

/** Posts one fulfillment callback, one attempt (the pipeline retries; idempotent: the same fact again). */
@Injectable()
export class FulfillmentCallbackClient {
  constructor(@Inject(SERVICE_APP_TRANSPORT) private readonly transport: HttpTransport) {}

  /** Resolves when the platform accepted it (any 2xx); throws a HubtelError otherwise. */
  async send(callback: FulfillmentCallback): Promise<void> {
    const body: FulfillmentCallback = {
      SessionId: callback.SessionId,
      OrderId: callback.OrderId,
      ServiceStatus: callback.ServiceStatus,
      MetaData: callback.MetaData ?? null,
    };
    try {
      await this.transport.request({
        api: 'fulfillment',
        method: 'POST',
        path: '/callback',
        body,
        idempotent: true,
        operation: 'serviceApp.fulfillmentCallback',
      });
    } catch (error) {
      // The contract shows no response body: a 2xx whose body is not JSON is still accepted.
      if (
        error instanceof HubtelError &&
        error.httpStatus !== undefined &&
        error.httpStatus >= 200 &&
        error.httpStatus < 300
      )
        return;
      throw error;
    }
  }
}
