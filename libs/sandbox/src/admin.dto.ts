import type { Type } from '@nestjs/common';
import { Allow, IsNumber, IsString, Matches } from 'class-validator';
import { HubtelValidationError, type ValidationIssue } from 'nestjs-hubtel';
import { compileValidator, HubtelOption, rules } from '#internal';
import { validateCallback, type CallbackFaultSpec } from './sandbox.faults.js';
import { SANDBOX_CHARGE_BEARERS } from './sandbox.options.dto.js';
import type { SandboxChargeBearer } from './sandbox.option-types.js';

// What a payment may say, as rules: the public methods check their options by them (and the types
// extend them), the admin API its JSON bodies (unknown fields refused; null reads as "not given").

const CURRENCY_MESSAGE = 'currency must be a three-letter currency code (GHS)';
const notBlank = (field: string) =>
  HubtelOption({ is: rules(IsString(), Matches(/\S/, { message: `${field} must not be blank` })) });

/** The one-off callback fault `POST /_sandbox/invoices/{ref}/pay` takes: `sandbox.pay`'s fault minus functions and rules. */
export class SandboxPayFaultDto {
  @HubtelOption({ bool: true })
  drop?: boolean;

  @HubtelOption({ is: IsNumber() })
  duplicate?: number;

  @HubtelOption({ bool: true })
  concurrent?: boolean;

  @HubtelOption({ is: IsNumber() })
  delayMs?: number;

  @HubtelOption({ is: IsNumber() })
  amount?: number;

  /** `true` (a random id) or a checkout id: two shapes no single rule says, checked by admin.api.ts. */
  @Allow()
  checkoutId?: true | string;

  @HubtelOption({ bool: true })
  forge?: boolean;
}

/** What a payment may say about its money (a test plays a mismatched payment). */
export class SandboxPaymentMoneyDto {
  /** The price paid, before charges. Default the invoice's `totalAmount`, or the cart's total (`Qty × Price`); another is a wrong sum. */
  @HubtelOption({ number: 0 })
  amount?: number;

  /** Who bears the charge of this payment. Default: the account's `chargeBearer`. */
  @HubtelOption({ oneOf: SANDBOX_CHARGE_BEARERS })
  chargeBearer?: SandboxChargeBearer;

  /** Currency the platform reports. Default `GHS`. */
  @HubtelOption({ is: rules(IsString(), Matches(/^[A-Z]{3}$/, { message: CURRENCY_MESSAGE })) })
  currency?: string;
}

/** A payment that may fail: `sandbox.pay`, a driver's `pay`. */
export class SandboxPaymentOutcomeDto extends SandboxPaymentMoneyDto {
  /** `paid` (default) or `failed`: a `2001` processor failure (no callback, no fulfillment request). */
  @HubtelOption({ oneOf: ['paid', 'failed'] })
  outcome?: 'paid' | 'failed';
}

/** `sandbox.pay`'s options: the body of `POST /_sandbox/invoices/{ref}/pay`. */
export class SandboxPayBodyDto extends SandboxPaymentOutcomeDto {
  /** Mobile-money number of the payer. Default: the invoice's payee number, else the sandbox default. */
  @notBlank('phone')
  phone?: string;

  /** Mobile-money channel (`mtn-gh`, `vodafone-gh`, `tigo-gh`). Default: from the number's prefix. */
  @notBlank('channel')
  channel?: string;

  /** `false`: record the payment but send no callback (a `dropped` delivery). Not with `fault`. */
  @HubtelOption({ bool: true })
  deliver?: boolean;

  @HubtelOption({ nested: () => SandboxPayFaultDto })
  fault?: SandboxPayFaultDto;
}

/** `sandbox.recordServicePayment`'s options: the body of `POST /_sandbox/sessions/{sessionId}/pay`. */
export class SandboxServicePaymentBodyDto extends SandboxPaymentMoneyDto {
  /** The order's id. Default: the session's order's, else a fresh one. */
  @notBlank('orderId')
  orderId?: string;

  /** The account of a session the sandbox did not drive. Default `default`; a driven one keeps its own. */
  @HubtelOption({ is: IsString() })
  account?: string;
}

/**
 * Checks a payment's options by `dto`'s rules (unknown fields let through) and its one-off fault,
 * with `issues` found besides; throws a HubtelValidationError before anything changes.
 */
export function checkPayment(
  dto: Type<object>,
  options: object = {},
  what = 'payment',
  issues: ValidationIssue[] = [],
): void {
  const { fault, ...rest } = options as { fault?: CallbackFaultSpec };
  const checked = compileValidator(dto)(rest);
  if (!checked.ok) issues.unshift(...checked.issues);
  if (issues.length > 0)
    throw new HubtelValidationError(`Invalid ${what}: ${issues.map((i) => i.message).join('; ')}`, issues);
  if (fault !== undefined) validateCallback(fault, 'fault');
}
