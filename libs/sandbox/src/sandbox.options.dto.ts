import { Allow, IsString, Matches, MaxLength } from 'class-validator';
import { HubtelOption, IsOptionalSection, rules } from '#internal';
import { SANDBOX_DEFAULT_POS_SALES_ID } from './sandbox.constants.js';
import type { SandboxChargeBearer } from './sandbox.option-types.js';

// The sandbox's plain-data options, their rules and defaults (the public option types extend
// these); what no decorator says is in sandbox.options.ts.

export const SANDBOX_CHARGE_BEARERS: readonly SandboxChargeBearer[] = ['merchant', 'payer'];

export class SandboxCredentialPairDto {
  @IsString()
  // Not empty, and no colon: the Basic auth separator would split the pair in the wrong place.
  @Matches(/^[^:]+$/, { message: 'clientId must not be empty nor contain ":" (Basic auth separator)' })
  clientId: string;

  @IsString()
  @Matches(/[\s\S]/, { message: 'clientSecret must not be empty' })
  clientSecret: string;
}

export class SandboxCredentialsDto {
  @IsOptionalSection(() => SandboxCredentialPairDto)
  sms?: SandboxCredentialPairDto;

  @IsOptionalSection(() => SandboxCredentialPairDto)
  api?: SandboxCredentialPairDto;

  /** A Basic-auth pair its fulfillment callbacks must carry (default none). */
  @IsOptionalSection(() => SandboxCredentialPairDto)
  callback?: SandboxCredentialPairDto;
}

const POS_SALES_ID_ERROR = { message: 'posSalesId must be 1-64 letters, digits, "-" or "_"' };
const IsPosSalesId = (fallback?: string) =>
  HubtelOption({
    is: rules(IsString(), Matches(/^[A-Za-z0-9_-]{1,64}$/, POS_SALES_ID_ERROR)),
    default: fallback,
  });
const IsMerchantName = (fallback?: string) =>
  HubtelOption({ is: rules(IsString(), MaxLength(200)), default: fallback });

/** One entry of `accounts` (checked one by one, so an error names `accounts[1].posSalesId`). */
export class SandboxAccountDto {
  /** Lower-case letters, digits, `-` and `_`, starting with a letter (`north`); not `default`. */
  @IsString()
  // It goes into env variable names, upper-cased with `-` as `_`.
  @Matches(/^[a-z][a-z0-9_-]{0,31}$/, {
    message: 'name must be 1-32 lower-case letters, digits, "-" or "_", starting with a letter',
  })
  name: string;

  /** Its key pairs. Default `sandbox-<name>-api` / `-api-secret`, `sandbox-<name>-sms` / `-sms-secret`. */
  @IsOptionalSection(() => SandboxCredentialsDto)
  credentials?: SandboxCredentialsDto;

  /** Its POS Sales ID (merchant account number). Default `2000000` + its 1-based place in `accounts`. */
  @IsPosSalesId()
  posSalesId?: string;

  /** Sender ids its SMS keys may send from. Default none: any sender that no other account declares. */
  @HubtelOption({ is: Allow() }) // no array rules in the validator: sandbox.options.ts checks the list
  senderIds?: string[];

  /** Name on its payment page. Default the top-level `checkout.merchantName`. */
  @IsMerchantName()
  merchantName?: string;

  /** Who bears the platform's charge on its payments. Default the top-level `checkout.chargeBearer`. */
  @HubtelOption({ oneOf: SANDBOX_CHARGE_BEARERS })
  chargeBearer?: SandboxChargeBearer;
}

export class SandboxSmsOptionsDto {
  /** Most recipients accepted in one batch (400, sub-code 7, beyond). Default 10,000. */
  @HubtelOption({ int: 1, default: 10_000 })
  maxRecipients: number;

  /** Longest `Content` accepted (400, sub-code 3, beyond). Default 1530 (10 parts of 153; undocumented). */
  @HubtelOption({ int: 1, default: 1530 })
  maxContentLength: number;

  /** Longest `From` accepted (400, sub-code 2, beyond). Default 11 (platform facts, L). */
  @HubtelOption({ int: 1, default: 11 })
  maxSenderLength: number;

  /** Value of the `rate` fields. Default 0.0309 (the platform's sample). */
  @HubtelOption({ number: 0, default: 0.0309 })
  rate: number;

  /** Milliseconds before a message reads `Delivered` (until then `Submitted`). Default 0. */
  @HubtelOption({ number: 0, default: 0 })
  deliveryDelayMs: number;

  /** Sender ids (`From`) the default account may send from (others: 400, sub-code 2). Default any. */
  @HubtelOption({ is: Allow() })
  senderIds?: string[];
}

export class SandboxCheckoutOptionsDto {
  /** Name shown on the hosted payment page. Default `Sandbox Merchant`. */
  @IsMerchantName('Sandbox Merchant')
  merchantName: string;

  /** Fee rate used for `charges` in the status check (not a platform figure). Default 0.01. */
  @HubtelOption({ number: 0, default: 0.01 })
  chargeRate: number;

  /** Who bears the charge, for every account that does not say. Default `merchant` (Hubtel's sample). */
  @HubtelOption({ oneOf: SANDBOX_CHARGE_BEARERS, default: 'merchant' })
  chargeBearer: SandboxChargeBearer;

  /** Smallest `totalAmount` accepted; below it `4070` (fees not set / amount below minimum). Default none. */
  @HubtelOption({ number: 0 })
  minAmount?: number;

  /** Fail payments (2001) of invoices whose description contains `& * ! % @` (platform facts, H). Default true. */
  @HubtelOption({ bool: true, default: true })
  rejectSpecialCharacters: boolean;

  /** Phone pre-filled on the payment page when the invoice names none. */
  @HubtelOption({ is: IsString(), default: '233241234567' })
  defaultPhone: string;
}

export class SandboxOptionsDto {
  /** Port to listen on; 0 (the default) picks a free one. */
  @HubtelOption({ int: [0, 65535], default: 0 })
  port: number;

  /** POS Sales ID (merchant account number) of the sandbox merchant. Default `2000000`. */
  @IsPosSalesId(SANDBOX_DEFAULT_POS_SALES_ID)
  posSalesId: string;

  /** Serve the dashboard at `/_dashboard` (`GET /` redirects there). Default true. */
  @HubtelOption({ bool: true, default: true })
  dashboard: boolean;

  /** Records kept per kind before the oldest are dropped (counters stay exact). Default 10,000. */
  @HubtelOption({ int: 1, default: 10_000 })
  recordLimit: number;

  /** Largest request body read, in bytes (413 beyond; the platform's is undocumented). Default 1 MiB. */
  @HubtelOption({ int: 1, default: 1024 * 1024 })
  maxBodyBytes: number;

  /** Time-out of the sandbox's own outbound calls (checkout callbacks, fulfillment requests). Default 10 s. */
  @HubtelOption({ int: 1, default: 10_000 })
  outboundTimeoutMs: number;

  /** The default account's credentials. Default {@link SANDBOX_DEFAULT_CREDENTIALS}. */
  @IsOptionalSection(() => SandboxCredentialsDto)
  credentials?: SandboxCredentialsDto;

  @HubtelOption({ nested: () => SandboxSmsOptionsDto, default: {} })
  sms: SandboxSmsOptionsDto;

  @HubtelOption({ nested: () => SandboxCheckoutOptionsDto, default: {} })
  checkout: SandboxCheckoutOptionsDto;
}
