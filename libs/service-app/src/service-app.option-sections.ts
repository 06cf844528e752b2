import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { HubtelConfigError } from 'nestjs-hubtel';
import {
  HUBTEL_DEFAULT_BASE_URLS,
  HUBTEL_ENV,
  HubtelBackoffOptionsDto,
  HubtelOption,
  IsHubtelPosSalesId,
  declareCredentials,
  rules,
  accountEnvVariable,
  optionFields,
} from '#internal';
import {
  SERVICE_APP_DEFAULT_MESSAGES,
  SERVICE_APP_DEFAULTS,
  SERVICE_APP_USSD_DEFAULTS,
  SERVICE_APP_SCOPE,
} from './service-app.constants.js';

const D = SERVICE_APP_DEFAULTS;

/** A key (`9`) or label (`More`) of the USSD menu pages. */
export function IsUssdText(maxLength: number): PropertyDecorator {
  return rules(IsOptional(), IsString(), IsNotEmpty(), MaxLength(maxLength));
}

/**
 * The transaction status check, which confirms an order's payment before its handlers run, with the
 * key pair of the checkout and status-check APIs (HUBTEL_CLIENT_ID / _SECRET, not the SMS pair).
 */
export class ServiceAppStatusCheckOptions extends declareCredentials({
  clientId: HUBTEL_ENV.clientId,
  clientSecret: HUBTEL_ENV.clientSecret,
}) {
  /** POS Sales ID of the account (HUBTEL_POS_SALES_ID). */
  @IsHubtelPosSalesId()
  @HubtelOption({ env: HUBTEL_ENV.posSalesId, account: 'own' })
  posSalesId: string;

  /** Base URL. Default `https://api-txnstatus.hubtel.com` (HUBTEL_STATUS_URL). */
  @HubtelOption({ url: true, env: HUBTEL_ENV.statusUrl, default: HUBTEL_DEFAULT_BASE_URLS.status })
  url?: string;

  /** Time-out of one status check, ms. Default 15000. */
  @HubtelOption({ int: [1, 600_000], default: D.callbackTimeoutMs })
  timeoutMs?: number;
}

/** How fulfillment requests are verified before any handler runs. */
export class ServiceAppVerificationOptions {
  /** Confirm each payment (`Paid`, the cart's total) with the status check. Default: with `statusCheck`. */
  @HubtelOption({ bool: true, defaultFrom: (_verification, options) => options.statusCheck !== undefined })
  enabled?: boolean;

  /**
   * A payment not recorded yet (no transaction, or `Unpaid`) is checked again for this long before
   * it is refused (`NOT_PAID`), at most 6 checks in all. Default 10 min; at most 1 h (the platform
   * wants its callback within the hour).
   */
  @HubtelOption({ int: [0, 3_600_000], default: D.verification.recheckForMs })
  recheckForMs?: number;

  /** First re-check (`baseDelayMs`, 2 s), and the cap (`maxDelayMs`, 60 s) of runs that failed otherwise. */
  @HubtelOption({ nested: () => HubtelBackoffOptionsDto, default: {} })
  recheckDelay?: HubtelBackoffOptionsDto;

  /** Largest accepted difference between the amount paid and the cart's total, in currency units. Default 0. */
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

  /** Replace characters outside GSM-7 (`’` → `'`, `ō` → `o`, others `?`) instead of losing the 182. Default false. */
  @HubtelOption({ bool: true, default: SERVICE_APP_USSD_DEFAULTS.transliterate })
  transliterate?: boolean;

  /** Key of the entry to a long menu's next page. Default `9`. */
  @IsUssdText(4)
  @HubtelOption({ default: SERVICE_APP_USSD_DEFAULTS.moreKey })
  moreKey?: string;

  /** Label of the entry to a long menu's next page. Default `More`. */
  @IsUssdText(30)
  @HubtelOption({ default: SERVICE_APP_USSD_DEFAULTS.moreLabel })
  moreLabel?: string;

  /** Key of the entry to a long menu's previous page. Default `8`. */
  @IsUssdText(4)
  @HubtelOption({ default: SERVICE_APP_USSD_DEFAULTS.backKey })
  backKey?: string;

  /** Label of the entry to a long menu's previous page. Default `Back`. */
  @IsUssdText(30)
  @HubtelOption({ default: SERVICE_APP_USSD_DEFAULTS.backLabel })
  backLabel?: string;

  /** More `Operator` values that mean USSD (a telco not in the built-in list), any case, country suffix allowed. */
  @HubtelOption()
  operators?: readonly string[];

  /** `Operator` values that are app channels even though they look like a telco. */
  @HubtelOption()
  appOperators?: readonly string[];
}

/** `callbackRetry`: backoff until the platform accepts, or the deadline. */
export class ServiceAppCallbackRetryOptions extends HubtelBackoffOptionsDto {
  /** Default one hour, the platform's limit. */
  @HubtelOption({ int: 1, default: D.callbackRetry.deadlineMs })
  deadlineMs?: number;
}

/** `fulfillmentRetry`: attempts of the @OnFulfillment handler, and their backoff. */
export class ServiceAppFulfillmentRetryOptions extends HubtelBackoffOptionsDto {
  /** Attempts in all, the first one included (at most 100). Default 5. */
  @HubtelOption({ int: [1, 100], default: D.fulfillmentRetry.maxAttempts })
  maxAttempts?: number;
}

/**
 * `messages`, checked with unknown fields refused (a misspelt key would silently keep the default);
 * declared from SERVICE_APP_DEFAULT_MESSAGES, so a new message needs no second list.
 */
export class ServiceAppMessagesOptions {}
for (const key of Object.keys(SERVICE_APP_DEFAULT_MESSAGES)) {
  IsOptional()(ServiceAppMessagesOptions.prototype, key);
  IsString()(ServiceAppMessagesOptions.prototype, key);
}

export function resolveBackInputs(value: unknown, P: string): string[] {
  if (value === false) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((v) => typeof v !== 'string' || v.trim() === '')) {
    throw new HubtelConfigError(`${P}.backInput`, 'must be a non-empty string, an array of them, or false');
  }
  return list.map((v: string) => v.trim());
}

/** The status check's variables that make one (key pair and POS Sales ID: its fields declared `own`). */
const STATUS_CHECK_CREDENTIALS = optionFields(ServiceAppStatusCheckOptions).filter(
  (field) => field.spec.account === 'own',
);

/**
 * The status check is read whole or not at all (HUBTEL_CLIENT_ID and _SECRET alone are checkout's);
 * a named account needs its own, whole, when the default has one or it sets any key.
 */
export function statusCheckFromEnv(
  read: { statusCheck?: Partial<ServiceAppStatusCheckOptions> },
  account?: { name: string; defaults: { statusCheck?: unknown } },
): void {
  const missing = STATUS_CHECK_CREDENTIALS.filter(
    (field) => read.statusCheck?.[field.key as 'clientId'] === undefined,
  );
  const own =
    account !== undefined &&
    (account.defaults.statusCheck !== undefined || missing.length < STATUS_CHECK_CREDENTIALS.length);
  if (!own) {
    if (missing.length > 0) delete read.statusCheck;
    return;
  }
  const [field] = missing;
  if (field)
    throw new HubtelConfigError(
      accountEnvVariable(account.name, field.spec.env!),
      `is not set: account "${account.name}" needs its own status check (environment variable of option ${SERVICE_APP_SCOPE}[${account.name}].statusCheck.${field.key})`,
    );
}
