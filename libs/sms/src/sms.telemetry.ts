import { HubtelUnknownOutcomeError, type HubtelSignal, type HubtelTelemetry } from 'nestjs-hubtel';

/** Sends one message and reports its recipient as sent, failed, or failed with its outcome unknown. */
export async function reportedSend<T>(telemetry: HubtelTelemetry, send: () => Promise<T>): Promise<T> {
  try {
    const result = await send();
    telemetry.record({ kind: 'sms', sent: 1, failed: 0, unknownOutcome: 0 });
    return result;
  } catch (error) {
    const unknown = error instanceof HubtelUnknownOutcomeError ? 1 : 0;
    telemetry.record({ kind: 'sms', sent: 0, failed: 1, unknownOutcome: unknown });
    throw error;
  }
}

/** The app's telemetry, with account `name` on every SMS signal (other signals pass as they are). */
export function accountTelemetry(telemetry: HubtelTelemetry, name: string): HubtelTelemetry {
  return {
    record(signal: HubtelSignal): void {
      telemetry.record(signal.kind === 'sms' ? { ...signal, account: name } : signal);
    },
  };
}
