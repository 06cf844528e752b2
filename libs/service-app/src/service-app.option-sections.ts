import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { HubtelConfigError } from 'nestjs-hubtel';
import {
  HUBTEL_DEFAULT_BASE_URLS,
  HUBTEL_ENV,
  HubtelBackoffOptionsDto,
  HubtelOption,
  IsHubtelClientId,
  IsHubtelClientSecret,
  IsHubtelPosSalesId,
  rules,
  accountEnvVariable,
  optionFields,
} from '#internal';
import {
  SERVICE_APP_DEFAULT_MESSAGES,
  SERVICE_APP_DEFAULTS,
  SERVICE_APP_USSD_DEFAULTS,
  type ServiceAppMessages,
  SERVICE_APP_SCOPE,
} from './service-app.constants.js';
import { assertUssdTexts, type ResolvedUssdOptions } from './service-app.ussd.js';

/* The sections of the service app's options (see ServiceAppModuleOptions), and the USSD rules across fields. */

const D = SERVICE_APP_DEFAULTS;

/** A key (`9`) or label (`More`) of the USSD menu pages. */
export function IsUssdText(maxLength: number): PropertyDecorator {
  return rules(IsOptional(), IsString(), IsNotEmpty(), MaxLength(maxLength));
}

/**
 * The transaction status check (`GET {status_url}/transactions/{posSalesId}/status?clientReference=<SessionId>`),
 * which confirms an order's payment before its handlers run. The key pair is the one of the
 * checkout and status-check APIs (HUBTEL_CLIENT_ID / HUBTEL_CLIENT_SECRET), not the SMS pair.
 */
export class ServiceAppStatusCheckOptions {
  @IsHubtelClientId()
  @HubtelOption({ env: HUBTEL_ENV.clientId, account: 'own' })
  clientId: string;

  /** Never logged. */
  @IsHubtelClientSecret()
  @HubtelOption({ env: HUBTEL_ENV.clientSecret, account: 'own' })
  clientSecret: string;

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
  /**
   * Confirm each order's payment with the status check: the SessionId's transaction must be
   * `Paid`, for the cart's total. Default: true when `statusCheck` is set (and it needs it).
   */
  @HubtelOption({ bool: true, defaultFrom: (_verification, options) => options.statusCheck !== undefined })
  enabled?: boolean;

  /**
   * A payment the platform has not recorded yet (no transaction, or `Unpaid`) is checked again
   * for this long after the request arrived before it is refused (`NOT_PAID`): at most 6 status
   * checks in all, the last at this time. Default 10 min; at most 1 h (the platform wants its
   * callback within the hour).
   */
  @HubtelOption({ int: [0, 3_600_000], default: D.verification.recheckForMs })
  recheckForMs?: number;

  /**
   * `baseDelayMs`: when the first re-check comes (the gaps then grow to fill `recheckForMs`).
   * `maxDelayMs`: the backoff cap of runs that failed for another reason (a store outage).
   * Default 2 s, 60 s.
   */
  @HubtelOption({ nested: () => HubtelBackoffOptionsDto, default: {} })
  recheckDelay?: HubtelBackoffOptionsDto;

  /** Largest accepted difference between the amount paid and the cart's total, in currency units. Default 0. */
  @HubtelOption({ number: 0, default: 0 })
  amountTolerance?: number;
}

/**
 * The USSD channel (a request with `Platform: USSD` or a telco `Operator`): the phone shows
 * `Message` only, so menus are written into it, paged to the screen. See docs/service-app.md.
 */
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
 * `messages`: a string per known message, checked with unknown fields refused (a misspelt key
 * would silently keep the default). Its fields are declared from SERVICE_APP_DEFAULT_MESSAGES, so
 * a new message needs no second list.
 */
export class ServiceAppMessagesOptions {}
for (const key of Object.keys(SERVICE_APP_DEFAULT_MESSAGES)) {
  IsOptional()(ServiceAppMessagesOptions.prototype, key);
  IsString()(ServiceAppMessagesOptions.prototype, key);
}

/**
 * The USSD options, with the rules across fields: the navigation keys differ from each other and
 * from the back inputs, and every text the module shows by itself fits one screen (a menu page
 * must still hold an option beside its two navigation lines) — found at start-up, not by a user.
 */
export function resolveUssd(
  checked: ServiceAppUssdOptions,
  backInputs: readonly string[],
  messages: ServiceAppMessages,
  P: string,
): ResolvedUssdOptions {
  const name = `${P}.ussd`;
  const ussd: ResolvedUssdOptions = {
    ...(checked as Required<ServiceAppUssdOptions>),
    moreKey: checked.moreKey!.trim(),
    backKey: checked.backKey!.trim(),
    operators: operatorList(checked.operators, `${name}.operators`),
    appOperators: operatorList(checked.appOperators, `${name}.appOperators`),
  };
  if (ussd.moreKey === ussd.backKey)
    throw new HubtelConfigError(`${name}.backKey`, `must differ from moreKey ("${ussd.moreKey}")`);
  for (const key of ['moreKey', 'backKey'] as const) {
    if (backInputs.includes(ussd[key]))
      throw new HubtelConfigError(
        `${name}.${key}`,
        `"${ussd[key]}" is also a backInput: a key must mean one thing`,
      );
  }
  assertUssdTexts(ussd, messages, name);
  return ussd;
}

function operatorList(value: unknown, option: string): ReadonlySet<string> {
  if (value === undefined) return new Set();
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.trim() === ''))
    throw new HubtelConfigError(option, 'must be an array of non-empty strings');
  return new Set(value.map((v: string) => v.trim().toLowerCase()));
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
 * The status check is read whole or not at all: HUBTEL_CLIENT_ID and _SECRET alone are
 * checkout's. A named account needs its own, whole, when the default has one or it sets any key.
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
