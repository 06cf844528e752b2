import type { ValidationIssue } from 'nestjs-hubtel';
import { invalidArgument, invalidInput } from './sandbox.errors.js';
import { validateCallback, type CallbackFaultSpec } from './sandbox.faults.js';
import { round2 } from './sandbox.http.js';
import { SANDBOX_CHARGE_BEARERS } from './sandbox.options.dto.js';
import type { SandboxState } from './sandbox.state.js';
import type { SandboxChargeBearer } from './sandbox.option-types.js';
import type { SandboxServiceOrder } from './sandbox.types.js';

/** Per-payment overrides of the account's charge settings (a test plays a mismatched payment). */
export interface SandboxChargeOptions {
  /** Who bears the charge of this payment. Default: the account's `chargeBearer`. */
  chargeBearer?: SandboxChargeBearer;
  /** Currency the platform reports. Default `GHS`. */
  currency?: string;
}

/** What every payment checks before anything changes: its outcome, amount and one-off fault. */
export function checkPayment(options: {
  outcome?: unknown;
  amount?: unknown;
  fault?: CallbackFaultSpec;
}): 'paid' | 'failed' {
  const outcome = options.outcome ?? 'paid';
  if (outcome !== 'paid' && outcome !== 'failed') {
    const summary = `outcome must be "paid" or "failed", got "${String(outcome)}"`;
    throw invalidArgument('outcome', 'must be "paid" or "failed"', outcome, summary);
  }
  if (options.fault !== undefined) validateCallback(options.fault, 'fault');
  if (options.amount !== undefined && (typeof options.amount !== 'number' || !(options.amount >= 0)))
    throw invalidArgument('amount', 'must be a number of at least 0', options.amount);
  return outcome;
}

/** Issues of the charge options, for the caller's validation error. */
export function chargeOptionIssues(options: SandboxChargeOptions): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (options.chargeBearer !== undefined && !SANDBOX_CHARGE_BEARERS.includes(options.chargeBearer))
    issues.push({
      field: 'chargeBearer',
      message: 'must be "merchant" or "payer"',
      value: options.chargeBearer,
    });
  if (
    options.currency !== undefined &&
    (typeof options.currency !== 'string' || !/^[A-Z]{3}$/.test(options.currency))
  )
    issues.push({
      field: 'currency',
      message: 'must be a three-letter currency code (GHS)',
      value: options.currency,
    });
  return issues;
}

/** The platform's figures for a payment of `price`: a fee of `chargeRate`, deducted or added per bearer. */
export function paymentMoney(
  state: SandboxState,
  account: string,
  price: number,
  options: SandboxChargeOptions = {},
): Pick<SandboxServiceOrder, 'amount' | 'charges' | 'amountAfterCharges' | 'chargeBearer' | 'currency'> {
  const issues = chargeOptionIssues(options);
  if (issues.length > 0) throw invalidInput('charge options', issues);
  const chargeBearer = options.chargeBearer ?? state.accounts.require(account).chargeBearer;
  const base = round2(price);
  const charges = round2(base * state.options.checkout.chargeRate);
  const currency = options.currency ?? 'GHS';
  return chargeBearer === 'payer'
    ? { amount: round2(base + charges), charges, amountAfterCharges: base, chargeBearer, currency }
    : { amount: base, charges, amountAfterCharges: round2(base - charges), chargeBearer, currency };
}
