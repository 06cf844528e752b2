import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { HubtelConfigError } from 'nestjs-hubtel';
import {
  HUBTEL_DEFAULT_BASE_URLS,
  HUBTEL_ENV,
  HubtelOption,
  IsHubtelPosSalesId,
  declareBackoff,
  declareCredentials,
  rules,
} from '#internal';
import {
  SERVICE_APP_DEFAULT_MESSAGES,
  SERVICE_APP_DEFAULTS,
  SERVICE_APP_USSD_DEFAULTS,
} from './service-app.constants.js';

const D = SERVICE_APP_DEFAULTS;

/** A key (`9`) or label (`More`) of the USSD menu pages. */
const IsUssdText = (maxLength: number) => rules(IsString(), IsNotEmpty(), MaxLength(maxLength));

/** The status check that confirms an order's payment, with the checkout key pair (HUBTEL_CLIENT_ID...). */
export class ServiceAppStatusCheckOptions extends declareCredentials({
  clientId: HUBTEL_ENV.clientId,
  clientSecret: HUBTEL_ENV.clientSecret,
}) {
  @IsHubtelPosSalesId()
  @HubtelOption({ env: HUBTEL_ENV.posSalesId, account: 'own' })
  posSalesId: string;

  /** Base URL. Default `https://api-txnstatus.hubtel.com`. */
  @HubtelOption({ url: true, env: HUBTEL_ENV.statusUrl, default: HUBTEL_DEFAULT_BASE_URLS.status })
  url?: string;

  /** Time-out of one status check, ms. Default 15000. */
  @HubtelOption({ int: [1, 600_000], default: D.callbackTimeoutMs })
  timeoutMs?: number;
}

export class ServiceAppRecheckDelayOptions extends declareBackoff(D.verification) {}

/** How fulfillment requests are verified before any handler runs. */
export class ServiceAppVerificationOptions {
  /** Confirm each payment (`Paid`, the cart's total) with the status check. Default: with `statusCheck`. */
  @HubtelOption({ bool: true, defaultFrom: (_verification, options) => options.statusCheck !== undefined })
  enabled?: boolean;

  /** A payment not recorded yet is checked again this long (6 checks at most). Default 10 min, ≤ 1 h. */
  @HubtelOption({ int: [0, 3_600_000], default: D.verification.recheckForMs })
  recheckForMs?: number;

  /** First re-check (`baseDelayMs`, default 2 s), and the cap (`maxDelayMs`, 60 s) of failed runs. */
  @HubtelOption({ nested: () => ServiceAppRecheckDelayOptions, default: {} })
  recheckDelay?: ServiceAppRecheckDelayOptions;

  /** Largest difference accepted between the amount paid and the cart's total (currency units). Default 0. */
  @HubtelOption({ number: 0, default: 0 })
  amountTolerance?: number;
}

/** The USSD channel (`Platform: USSD` or a telco `Operator`): menus written into `Message`, paged. */
export class ServiceAppUssdOptions {
  /** Characters of a GSM 7-bit screen. Default 182. */
  @HubtelOption({ int: [60, 1_000], default: SERVICE_APP_USSD_DEFAULTS.screenSize })
  screenSize?: number;

  /** Characters of a screen holding any character outside GSM-7. Default 70. */
  @HubtelOption({
    int: [40, 1_000],
    atMost: 'screenSize',
    default: SERVICE_APP_USSD_DEFAULTS.unicodeScreenSize,
  })
  unicodeScreenSize?: number;

  /** Replace characters outside GSM-7 (`’` → `'`, others `?`) to keep the 182. Default false. */
  @HubtelOption({ bool: true, default: SERVICE_APP_USSD_DEFAULTS.transliterate })
  transliterate?: boolean;

  /** Key of the entry to a long menu's next page. Default `9`. */
  @HubtelOption({ is: IsUssdText(4), default: SERVICE_APP_USSD_DEFAULTS.moreKey })
  moreKey?: string;

  /** Label of the entry to a long menu's next page. Default `More`. */
  @HubtelOption({ is: IsUssdText(30), default: SERVICE_APP_USSD_DEFAULTS.moreLabel })
  moreLabel?: string;

  /** Key of the entry to a long menu's previous page. Default `8`. */
  @HubtelOption({ is: IsUssdText(4), default: SERVICE_APP_USSD_DEFAULTS.backKey })
  backKey?: string;

  /** Label of the entry to a long menu's previous page. Default `Back`. */
  @HubtelOption({ is: IsUssdText(30), default: SERVICE_APP_USSD_DEFAULTS.backLabel })
  backLabel?: string;

  /** More `Operator` values that mean USSD (a telco not built in), any case, country suffix allowed. */
  @HubtelOption()
  operators?: readonly string[];

  /** `Operator` values that are app channels even though they look like a telco. */
  @HubtelOption()
  appOperators?: readonly string[];
}

/** `callbackRetry`: backoff until the platform accepts, or the deadline. */
export class ServiceAppCallbackRetryOptions extends declareBackoff(D.callbackRetry) {
  /** Default one hour, the platform's limit. */
  @HubtelOption({ int: 1, default: D.callbackRetry.deadlineMs })
  deadlineMs?: number;
}

/** `fulfillmentRetry`: attempts of the @OnFulfillment handler, and their backoff. */
export class ServiceAppFulfillmentRetryOptions extends declareBackoff(D.fulfillmentRetry) {
  /** Attempts in all, the first one included (at most 100). Default 5. */
  @HubtelOption({ int: [1, 100], default: D.fulfillmentRetry.maxAttempts })
  maxAttempts?: number;
}

/** `messages`, unknown fields refused (a misspelt key would keep the default): from the defaults' keys. */
export class ServiceAppMessagesOptions {}
for (const key of Object.keys(SERVICE_APP_DEFAULT_MESSAGES)) {
  IsOptional()(ServiceAppMessagesOptions.prototype, key);
  IsString()(ServiceAppMessagesOptions.prototype, key);
}

export function resolveBackInputs(value: unknown, P: string): string[] {
  if (value === false) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((v) => typeof v !== 'string' || v.trim() === ''))
    throw new HubtelConfigError(`${P}.backInput`, 'must be a non-empty string, an array of them, or false');
  return list.map((v: string) => v.trim());
}
