import { Allow, IsString, Matches, MaxLength } from 'class-validator';
import { HubtelOption, IsOptionalSection, rules } from '#internal';
import { SANDBOX_ACCOUNT_NAME, SANDBOX_DEFAULT_POS_SALES_ID } from './sandbox.constants.js';
import type { SandboxChargeBearer } from './sandbox.option-types.js';

// The sandbox's plain-data options and their defaults; what no decorator says is in sandbox.options.ts.

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

  @IsOptionalSection(() => SandboxCredentialPairDto)
  callback?: SandboxCredentialPairDto;
}

const POS_SALES_ID = /^[A-Za-z0-9_-]{1,64}$/;
const IsPosSalesId = (fallback?: string) =>
  HubtelOption({
    is: rules(
      IsString(),
      Matches(POS_SALES_ID, { message: 'posSalesId must be 1-64 letters, digits, "-" or "_"' }),
    ),
    default: fallback,
  });
const IsMerchantName = (fallback?: string) =>
  HubtelOption({ is: rules(IsString(), MaxLength(200)), default: fallback });

/** One entry of `accounts` (checked one by one, so an error names `accounts[1].posSalesId`). */
export class SandboxAccountDto {
  @IsString()
  @Matches(SANDBOX_ACCOUNT_NAME, {
    message: 'name must be 1-32 lower-case letters, digits, "-" or "_", starting with a letter',
  })
  name: string;

  @IsOptionalSection(() => SandboxCredentialsDto)
  credentials?: SandboxCredentialsDto;

  @IsPosSalesId()
  posSalesId?: string;

  // The validator has no array rules: sandbox.options.ts checks the list.
  @HubtelOption({ is: Allow() })
  senderIds?: string[];

  @IsMerchantName()
  merchantName?: string;

  @HubtelOption({ oneOf: SANDBOX_CHARGE_BEARERS })
  chargeBearer?: SandboxChargeBearer;
}

export class SandboxSmsOptionsDto {
  @HubtelOption({ int: 1, default: 10_000 })
  maxRecipients: number;

  /** Not documented by the platform; 10 concatenated parts of 153 characters. */
  @HubtelOption({ int: 1, default: 1530 })
  maxContentLength: number;

  /** Sender ids longer than 11 characters are refused (platform facts, L). */
  @HubtelOption({ int: 1, default: 11 })
  maxSenderLength: number;

  /** Cost per message in the `rate` fields (the platform's sample shows 0.0309). */
  @HubtelOption({ number: 0, default: 0.0309 })
  rate: number;

  @HubtelOption({ number: 0, default: 0 })
  deliveryDelayMs: number;

  @HubtelOption({ is: Allow() })
  senderIds?: string[];
}

export class SandboxCheckoutOptionsDto {
  @IsMerchantName('Sandbox Merchant')
  merchantName: string;

  /** Fee taken on a payment, shown by the status check (`charges`); not a platform figure. */
  @HubtelOption({ number: 0, default: 0.01 })
  chargeRate: number;

  /** The merchant (deducted) by default, as Hubtel's status-check sample shows. */
  @HubtelOption({ oneOf: SANDBOX_CHARGE_BEARERS, default: 'merchant' })
  chargeBearer: SandboxChargeBearer;

  @HubtelOption({ number: 0 })
  minAmount?: number;

  /** Payments of invoices whose description holds one of `& * ! % @` fail with 2001 (platform facts, H). */
  @HubtelOption({ bool: true, default: true })
  rejectSpecialCharacters: boolean;

  @HubtelOption({ is: IsString(), default: '233241234567' })
  defaultPhone: string;
}

export class SandboxOptionsDto {
  @HubtelOption({ int: [0, 65535], default: 0 })
  port: number;

  @IsPosSalesId(SANDBOX_DEFAULT_POS_SALES_ID)
  posSalesId: string;

  @HubtelOption({ bool: true, default: true })
  dashboard: boolean;

  @HubtelOption({ int: 1, default: 10_000 })
  recordLimit: number;

  /** The platform's limit is not documented. */
  @HubtelOption({ int: 1, default: 1024 * 1024 })
  maxBodyBytes: number;

  @HubtelOption({ int: 1, default: 10_000 })
  outboundTimeoutMs: number;

  @IsOptionalSection(() => SandboxCredentialsDto)
  credentials?: SandboxCredentialsDto;

  @HubtelOption({ nested: () => SandboxSmsOptionsDto, default: {} })
  sms: SandboxSmsOptionsDto;

  @HubtelOption({ nested: () => SandboxCheckoutOptionsDto, default: {} })
  checkout: SandboxCheckoutOptionsDto;
}
