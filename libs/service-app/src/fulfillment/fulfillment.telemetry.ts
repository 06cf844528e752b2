import { type HubtelTelemetry } from 'nestjs-hubtel';

/** Sends a fulfillment callback (one attempt) and reports how it went. */
export async function reportedCallback(
  telemetry: HubtelTelemetry,
  status: string,
  attempt: number,
  send: () => Promise<void>,
): Promise<void> {
  // ServiceStatus is `success` or `failed` (validated); anything else is kept out of the labels.
  const reported = status === 'success' || status === 'failed' ? status : 'other';
  try {
    await send();
    telemetry.record({ kind: 'fulfillment-callback', status: reported, ok: true, attempt });
  } catch (error) {
    telemetry.record({ kind: 'fulfillment-callback', status: reported, ok: false, attempt });
    throw error;
  }
}
