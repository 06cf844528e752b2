import type { SandboxPaymentMoneyDto } from './admin.dto.js';
import { round2 } from './sandbox.http.js';
import type { SandboxState } from './sandbox.state.js';
import type { SandboxServiceOrder } from './sandbox.types.js';

export interface SandboxChargeOptions extends SandboxPaymentMoneyDto {}

/** The platform's figures for a payment of `price` (options checked): a fee of `chargeRate`, deducted or added per bearer. */
export function paymentMoney(
  state: SandboxState,
  account: string,
  price: number,
  options: SandboxChargeOptions = {},
): Pick<SandboxServiceOrder, 'amount' | 'charges' | 'amountAfterCharges' | 'chargeBearer' | 'currency'> {
  const chargeBearer = options.chargeBearer ?? state.accounts.require(account).chargeBearer;
  const base = round2(price);
  const charges = round2(base * state.options.checkout.chargeRate);
  const currency = options.currency ?? 'GHS';
  return chargeBearer === 'payer'
    ? { amount: round2(base + charges), charges, amountAfterCharges: base, chargeBearer, currency }
    : { amount: base, charges, amountAfterCharges: round2(base - charges), chargeBearer, currency };
}
