import { Allow, IsNumber, IsString, Matches } from 'class-validator';
import { HubtelOption, rules } from '#internal';

// JSON bodies of the admin API (unknown fields refused; null reads as "not given"); what they
// mean is checked by `sandbox.pay` itself, before anything changes.

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

/** What a recorded payment may say about its money: both pay bodies take it. */
class SandboxPaymentMoneyDto {
  /** The price paid for, before charges (an underpayment plays a wrong sum). */
  @HubtelOption({ number: 0 })
  amount?: number;

  @HubtelOption({ oneOf: ['merchant', 'payer'] })
  chargeBearer?: 'merchant' | 'payer';

  @HubtelOption({
    is: rules(
      IsString(),
      Matches(/^[A-Z]{3}$/, { message: 'currency must be a three-letter currency code (GHS)' }),
    ),
  })
  currency?: string;
}

/** The body of `POST /_sandbox/invoices/{ref}/pay`. */
export class SandboxPayBodyDto extends SandboxPaymentMoneyDto {
  @HubtelOption({ oneOf: ['paid', 'failed'] })
  outcome?: 'paid' | 'failed';

  @notBlank('phone')
  phone?: string;

  @notBlank('channel')
  channel?: string;

  @HubtelOption({ bool: true })
  deliver?: boolean;

  @HubtelOption({ nested: () => SandboxPayFaultDto })
  fault?: SandboxPayFaultDto;
}

/** The body of `POST /_sandbox/sessions/{sessionId}/pay`. */
export class SandboxServicePaymentBodyDto extends SandboxPaymentMoneyDto {
  @notBlank('orderId')
  orderId?: string;

  /** The account whose service the session is (for a session the sandbox did not drive). */
  @HubtelOption({ is: IsString() })
  account?: string;
}
