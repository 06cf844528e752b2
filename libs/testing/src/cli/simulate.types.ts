import type { SandboxFulfillmentCallback, ServiceAppDriverOptions } from 'nestjs-hubtel/sandbox';

/** The session's `serviceCode`, `mobile`, `operator`, `channel` and `timeoutMs` go to the sandbox's driver as given. */
export interface TerminalSimulatorOptions extends Pick<
  ServiceAppDriverOptions,
  'serviceCode' | 'mobile' | 'operator' | 'channel' | 'timeoutMs'
> {
  /** The Service Interaction URL (`http://127.0.0.1:3000/api/service-flow`). */
  serviceFlowUrl: string;
  /** The Service Fulfillment URL, on the same origin. Default: the service-flow URL with `service-flow` → `fulfillment`. */
  fulfillmentUrl?: string;
  /** USSD screen size in characters (GSM-7). Default 182. */
  screenSize?: number;
  /** USSD screen size once any character is outside GSM-7 (UCS-2). Default 70. */
  unicodeScreenSize?: number;
  /** A running sandbox that receives the app's callbacks. Default: the simulator's own receiver. */
  sandboxUrl?: string;
  /** With `sandboxUrl`: the account whose programmable service this is. Default: its default one. */
  account?: string;
  /** Port of the simulator's own fulfillment-callback receiver. Default: a free one. */
  callbackPort?: number;
  /** How long to wait for the fulfillment callback after paying. Default 60 s. */
  callbackTimeoutMs?: number;
  /** Stop when an answer breaks the contract (default: warn and go on). */
  strict?: boolean;
  noColor?: boolean;
}

/** How one session ended, for the exit code. */
export interface SimulationResult {
  exitCode: number;
  sessionId: string;
  /** `ended` by the service, `released` by the user, `paid` (and fulfilled or not), `error`, `interrupted`. */
  outcome: 'ended' | 'released' | 'fulfilled' | 'not-fulfilled' | 'payment-failed' | 'error' | 'interrupted';
  callback?: SandboxFulfillmentCallback | Record<string, unknown>;
}
