import { Injectable } from '@nestjs/common';
import {
  HubtelLogger,
  maskMsisdn,
  maskPhoneNumbers,
  tryNormalizeMsisdn,
  type DeadLetterEvent,
} from 'nestjs-hubtel';
import {
  OnFulfillment,
  OnFulfillmentCallbackSent,
  OnServiceAppDeadLetter,
  failFulfillment,
  fulfilled,
  type FulfillmentCallbackSentEvent,
  type FulfillmentRequestedEvent,
} from 'nestjs-hubtel/service-app';
import { BundleDeliveries } from './bundle-deliveries.service.js';
import { findBundle } from './bundle.flow.js';

/**
 * Delivers paid data bundles. The ServiceAppModule calls `deliver` once per paid order (the
 * fulfillment request's OrderId), then posts the fulfillment callback to the platform with the
 * returned MetaData — retrying until the platform accepts it.
 */
@Injectable()
export class BundleFulfillment {
  private readonly logger = new HubtelLogger('Bundles');

  constructor(private readonly deliveries: BundleDeliveries) {}

  @OnFulfillment()
  async deliver(order: FulfillmentRequestedEvent) {
    const data = order.serviceData;
    const bundle = findBundle(data.bundle);
    const destination = tryNormalizeMsisdn(data.destination);
    if (!bundle || !destination.ok || order.item === null) {
      // Not a cart this flow built: tell the platform at once (it refunds), no retries.
      this.logger.error(
        `Order ${order.orderId}: cannot deliver (bundle ${String(data.bundle)}, destination ${destination.ok ? 'ok' : 'invalid'})`,
      );
      return failFulfillment({ reason: 'unknown bundle or destination' });
    }
    const delivery = await this.deliveries.deliver({
      orderId: order.orderId,
      sessionId: order.sessionId,
      destination: destination.msisdn,
      bundle: bundle.Value,
      bundleName: bundle.Display,
      amount: bundle.Amount,
    });
    this.logger.log(
      `Order ${order.orderId}: ${bundle.Display} delivered to ${maskMsisdn(destination.msisdn)}`,
    );
    return fulfilled({ deliveryId: delivery.id });
  }

  @OnFulfillmentCallbackSent()
  async onCallbackSent(event: FulfillmentCallbackSentEvent): Promise<void> {
    await this.deliveries.reported(event.orderId, event.serviceStatus);
  }

  @OnServiceAppDeadLetter()
  onDeadLetter(event: DeadLetterEvent): void {
    // The platform never accepted the outcome (or delivery kept failing): a person must follow up.
    this.logger.error(
      `Service-app job ${event.type} ${event.key} gave up after ${event.attempts} attempts: ${maskPhoneNumbers(event.error)}`,
    );
  }
}
