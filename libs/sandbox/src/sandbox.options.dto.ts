import {
  Allow,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { IsOptionalSection } from '#internal';
import { SANDBOX_ACCOUNT_NAME } from './sandbox.constants.js';
import { SANDBOX_CHARGE_BEARERS } from './payment.charges.js';
import type { SandboxChargeBearer } from './sandbox.option-types.js';

// The sandbox's plain-data options (checkOptions); what no decorator says is in sandbox.options.ts.

const FINITE = { allowNaN: false, allowInfinity: false } as const;

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
const POS_SALES_ID_MESSAGE = { message: 'posSalesId must be 1-64 letters, digits, "-" or "_"' };

/** One entry of `accounts` (checked one by one, so an error names `accounts[1].posSalesId`). */
export class SandboxAccountDto {
  @IsString()
  @Matches(SANDBOX_ACCOUNT_NAME, {
    message: 'name must be 1-32 lower-case letters, digits, "-" or "_", starting with a letter',
  })
  name: string;

  @IsOptionalSection(() => SandboxCredentialsDto)
  credentials?: SandboxCredentialsDto;

  @IsOptional()
  @IsString()
  @Matches(POS_SALES_ID, POS_SALES_ID_MESSAGE)
  posSalesId?: string;

  // The validator has no array rules: sandbox.options.ts checks the list.
  @IsOptional()
  @Allow()
  senderIds?: string[];

  @IsOptional()
  @IsString()
  @MaxLength(200)
  merchantName?: string;

  @IsOptional()
  @IsIn(SANDBOX_CHARGE_BEARERS)
  chargeBearer?: SandboxChargeBearer;
}

export class SandboxSmsOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  maxRecipients?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  maxContentLength?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  maxSenderLength?: number;

  @IsOptional()
  @IsNumber(FINITE)
  @Min(0)
  rate?: number;

  @IsOptional()
  @IsNumber(FINITE)
  @Min(0)
  deliveryDelayMs?: number;

  // The validator has no array rules: sandbox.options.ts checks the list.
  @IsOptional()
  @Allow()
  senderIds?: string[];
}

export class SandboxCheckoutOptionsDto {
  @IsOptional()
  @IsNumber(FINITE)
  @Min(0)
  chargeRate?: number;

  @IsOptional()
  @IsIn(SANDBOX_CHARGE_BEARERS)
  chargeBearer?: SandboxChargeBearer;

  @IsOptional()
  @IsNumber(FINITE)
  @Min(0)
  minAmount?: number;
}

export class SandboxOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(65535)
  port?: number;

  @IsOptional()
  @IsString()
  @Matches(POS_SALES_ID, POS_SALES_ID_MESSAGE)
  posSalesId?: string;

  @IsOptional()
  @IsBoolean()
  dashboard?: boolean;

  @IsOptional()
  @IsInt()
  @Min(1)
  recordLimit?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  maxBodyBytes?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  outboundTimeoutMs?: number;

  @IsOptionalSection(() => SandboxCredentialsDto)
  credentials?: SandboxCredentialsDto;

  @IsOptionalSection(() => SandboxSmsOptionsDto)
  sms?: SandboxSmsOptionsDto;

  @IsOptionalSection(() => SandboxCheckoutOptionsDto)
  checkout?: SandboxCheckoutOptionsDto;
}
