import { TESTING_DEFAULTS, TESTING_PATHS } from '../testing.constants.js';
import { cliOptions } from '#light/sandbox';

// What each command's --help says and which options it takes (the bins read them before Nest loads).

export const TRIGGER_KINDS = [
  'checkout',
  'checkout-duplicate',
  'checkout-forged',
  'fulfillment',
  'fulfillment-forged',
  'fulfillment-callback',
  'service-flow',
] as const;
export type TriggerKind = (typeof TRIGGER_KINDS)[number];
export const FORGERIES = ['unknown-reference', 'wrong-amount', 'wrong-checkout-id'] as const;
export type Forgery = (typeof FORGERIES)[number];

export const TRIGGER_CLI_USAGE = `Usage: hubtel-trigger <kind> <url> [options]

Sends a sample of what the Hubtel platform sends to your app, and prints each answer (HTTP status
and body). Bodies are built field for field as the platform's contract writes them.

Kinds:
  checkout              a checkout web callback: a paid invoice (--outcome failed: a refused payment)
  checkout-duplicate    the same callback, --copies times at once (default 2): handled once?
  checkout-forged       a forged callback (--forge): unknown-reference (default), wrong-amount,
                        wrong-checkout-id: rejected?
  fulfillment           a programmable-services fulfillment request (--copies for duplicates);
                        with --sandbox and --mark-paid the session's payment is recorded there first
  fulfillment-forged    a fulfillment request nobody paid for (the status check knows no payment
                        for the SessionId): refused by an app that verifies payments?
  fulfillment-callback  a fulfillment callback, to a platform receiver (a sandbox's /callback)
  service-flow          one service-flow request, as the platform sends it on USSD or from the
                        app; on USSD the answer is shown as the phone shows it (Message only) and
                        a screen over the size is flagged; a cart (AddToCart, on USSD Release with
                        an Item) is printed with the fulfillment command that pays it
  dead-letters          list | replay <id>: the jobs an app on Redis gave up on
                        (hubtel-trigger dead-letters --help)

  <url>                 your app's origin (the module's default route is added:
                        ${TESTING_PATHS.checkoutCallback}, ${TESTING_PATHS.fulfillment}, ${TESTING_PATHS.serviceFlow}) or the full endpoint URL

Checkout options:
  --reference <ref>       ClientReference of the invoice (required, except to forge an unknown one)
  --checkout-id <id>      CheckoutId the platform gave the invoice (required for a valid callback)
  --amount <n>            Amount paid (required for a valid callback; the forged amount for wrong-amount)
  --sandbox <url>         a running sandbox to read the invoice's checkout id, amount and payer from
  --mark-paid             with --sandbox: first mark the invoice paid in that sandbox WITHOUT its
                          callback, so the status check confirms the callback this sends; with
                          --amount, the price paid instead of the invoice's (an underpayment)
  --charge-bearer <who>   with --mark-paid: merchant (the charge deducted) or payer (added to what
                          the payer pays: the callback and status check say more than the total)
  --currency <code>       with --mark-paid: the currency the status check reports (default GHS;
                          another one is a payment that needs attention)
  --outcome <paid|failed> default paid
  --phone <msisdn>        the payer (default 233241234567)
  --channel <code>        mtn-gh, vodafone-gh, tigo-gh (default: from the number)
  --forge <how>           for checkout-forged: ${FORGERIES.join(' | ')}
Fulfillment options:
  --session-id <id>       SessionId of the session that ended in AddToCart (required)
  --order-id <id>         OrderId (default: random)
  --sandbox <url>         with --mark-paid: the sandbox the app's status check asks
  --mark-paid             record the session's payment in that sandbox first (amount: the cart's
                          total the sandbox knows, or --amount), so the app's verification passes
  --amount <n>            the price recorded with --mark-paid (another than the cart's: a mismatch)
  --charge-bearer <who>   with --mark-paid: merchant or payer (see Checkout options)
  --currency <code>       with --mark-paid: the currency the status check reports (default GHS)
  --service-status <s>    fulfillment-callback only (default success)
Service-flow options:
  --type <type>           Type of the request (default initiation): Response, Release, timeout,
                          query, favorite, or anything else, sent as given
  --message <text>        Message: what the user typed (on USSD, an option's number); empty on initiation
  --session-id <id>       SessionId (default: random; the same id continues a session)
  --operator <name>       Operator (default ${TESTING_DEFAULTS.operator})
  --mobile <msisdn>       Mobile (default ${TESTING_DEFAULTS.phone})
  --service-code <code>   ServiceCode (default ${TESTING_DEFAULTS.serviceCode})
  --channel <ussd|app>    ussd: shows the answer as a USSD phone does and flags a screen over the
                          size (Platform USSD is sent when the operator is not a telco); app: the
                          answer as is (default: ussd for a telco operator, app otherwise)
  --screen-size <n>       USSD screen size in characters (default 182; 70 with a non-GSM character,
                          --unicode-screen-size <n>)
Common:
  --copies <n>            send n identical copies at the same time (default 1; checkout-duplicate 2)
  --path <path>           endpoint path when <url> is an origin (default: the module's route)
  --account <name>        send to a named account's route (the path with /<name> after it), as
                          the platform does for that account's invoices and services
  -H, --header <h>        extra request header "Name: value" (repeatable)
  --timeout <ms>          per request (default 10000)
  --json                  print one JSON object (url, body, answers) instead of text
  --dry-run               print what would be sent; send nothing
  --no-color              plain output (also NO_COLOR=1)
  -h, --help              show this help

A CheckoutModule answers 200 to every well-formed callback, forged ones included (a forger learns
nothing): whether it was handled, a duplicate or rejected shows in your app (events, logs, the
order). With a POS Sales ID the module also confirms a callback with the status check: against
the sandbox, a valid callback then counts only for an invoice the sandbox knows as paid (pay it on
the sandbox's payment page, or add --mark-paid).

A ServiceAppModule with a status check (serviceApp.statusCheck) answers every well-formed
fulfillment request 200 "received", then confirms the SessionId's payment before any handler runs:
against a sandbox, send "fulfillment" with --sandbox <url> --mark-paid; "fulfillment-forged" must
end in a rejected event (NOT_PAID) with no handler run and no callback.

Errors print the reason the app, the sandbox or the platform gave (its message and field errors).
Exit codes: 0 every answer was 2xx; 1 an answer was not 2xx, or the sandbox refused (no such
invoice, --mark-paid could not mark or record the payment), or a service-flow answer on USSD was
over the screen size; 2 usage error; 3 the URL (no copy got an answer) or the sandbox could not be
reached.
`;

export const TRIGGER_OPTIONS = {
  ...cliOptions(
    [
      'reference checkout-id amount sandbox charge-bearer currency outcome phone channel forge',
      'session-id order-id service-status type message operator mobile service-code screen-size',
      'unicode-screen-size copies path account timeout',
    ],
    ['mark-paid json dry-run no-color'],
  ),
  header: { type: 'string', short: 'H', multiple: true },
} as const;

export const SIMULATE_CLI_USAGE = `Usage: hubtel-simulate <service-flow-url> [options]

Plays Hubtel's client app against your programmable service, as a USSD phone or as the Hubtel
app: shows each screen, reads your answers, shows the cart and pays it (the fulfillment request),
then waits for your app's fulfillment callback.

  <service-flow-url>          your Service Interaction URL, e.g. http://localhost:3000/api/service-flow

Options:
      --service-code <code>   ServiceCode of the session (default ${TESTING_DEFAULTS.serviceCode})
      --mobile <msisdn>       the user's number (default ${TESTING_DEFAULTS.phone})
      --operator <name>       the user's channel: mtn, vodafone, airtel, tigo, Hubtel-Android... (default ${TESTING_DEFAULTS.operator})
      --channel <ussd|app>    ussd: a phone that shows Message only (menus must be in it), flags a
                              screen over the size, sends the number typed, and pays a Release
                              carrying an Item; app: the Hubtel app, listing the options of Data
                              (default: ussd for a telco operator, mtn, vodafone-gh..., app otherwise)
      --screen-size <n>       USSD screen size in characters (default 182)
      --unicode-screen-size <n>  the size once any character is outside GSM-7 (default 70)
      --fulfillment-url <url> your Service Fulfillment URL (default: the service-flow URL with
                              service-flow replaced by fulfillment)
      --sandbox <url>         a running sandbox your app sends fulfillment callbacks to (hubtel-sandbox,
                              or an app's embedded one); the callback is read from its records
      --account <name>        with --sandbox: the sandbox account whose programmable service this is
                              (its status check confirms the payment to that account's keys only);
                              the URL names your app's account: .../api/service-flow/<account>
                              (default: the sandbox's default account)
      --callback-port <n>     otherwise the simulator receives callbacks itself on this port (default: free)
      --callback-timeout <s>  seconds to wait for the fulfillment callback (default 60)
      --timeout <ms>          time allowed for each answer of the service (default 5000, the USSD limit)
      --strict                stop when an answer breaks the contract (default: warn)
      --no-color              plain output (also NO_COLOR=1)
  -h, --help                  show this help

Answers: type the text asked for; on a list, the option's number (or its Value; on USSD what you
type is sent as typed, the service maps the number). On the cart:
y pays, n declines, f simulates a failed payment. Ctrl+C (or the end of the input) releases the session.

Errors print the reason the service or the sandbox gave. Exit codes: 0 the session ended normally
(a purchase was fulfilled), 1 the service failed (HTTP error, invalid answer, no or failed
fulfillment), 2 usage error (or --callback-port already in use), 3 the service could not be
reached, 130 interrupted.
`;

export const SIMULATE_OPTIONS = cliOptions(
  [
    'service-code mobile operator channel screen-size unicode-screen-size fulfillment-url',
    'sandbox account callback-port callback-timeout timeout',
  ],
  ['strict no-color'],
);

export const DEAD_LETTERS_USAGE = `Usage: hubtel-trigger dead-letters list   --redis-url <url> | --redis-cluster-nodes <nodes> [options]
       hubtel-trigger dead-letters replay <id> --redis-url <url> | --redis-cluster-nodes <nodes> [options]

Lists the jobs an app gave up on (dead letters: handlers that kept failing, callbacks never
accepted), or replays one once its cause is fixed: only the handlers that failed run again.
Works on the app's Redis store. A replay is queued on BullMQ on the same Redis: any running
replica of the app runs it at once.

Options:
  --redis-url <url>     the Redis the app keeps its records in (redis:// or rediss://)
  --redis-cluster-nodes <host:port,...>
                        or: some nodes of the Redis Cluster it keeps them in (every master is read)
  --key-prefix <p>      the keyPrefix given to HubtelRedisModule / RedisStore (default none)
  --bullmq-prefix <p>   replay: the prefix given to HubtelBullmqModule (default {hubtel}:bull)
  --module <name>       checkout (default) or service-app
  --wait                replay: wait until the job is done (exit 0) or dead again (exit 1)
  --timeout <ms>        how long --wait waits (default 60000)
  --json                print JSON (list: an array; replay: the record's outcome)
  --no-color            plain output (also NO_COLOR=1)

Exit codes: 0 done, 1 unknown id / not dead / dead again (with its last error), 2 usage error (or
ioredis / bullmq not installed), 3 Redis unreachable, 4 --wait ran out with the job still pending.
`;

export const DEAD_LETTERS_OPTIONS = cliOptions(
  ['redis-url redis-cluster-nodes key-prefix bullmq-prefix module timeout'],
  ['wait json no-color'],
);
