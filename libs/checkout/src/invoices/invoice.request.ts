/** The `/items/initiate` body for a createInvoice() input: every check, defaults filled in. */
import { randomUUID } from 'node:crypto';
import { HubtelValidationError, tryNormalizeMsisdn, type ValidationIssue } from 'nestjs-hubtel';
import { compileValidator } from '#internal';
import { CLIENT_REFERENCE_MAX_LENGTH, DESCRIPTION_FORBIDDEN_CHARACTERS } from '../checkout.constants.js';
import type { ResolvedCheckoutOptions } from '../checkout.options.js';
import {
  CreateInvoiceDto,
  type CheckoutInitiateRequestBody,
  type CreateInvoiceInput,
} from './invoice.dto.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const METADATA_MAX_BYTES = 4096;
/** The URLs of an invoice: each given, or the module option's; the hint says how to give one. */
const URL_FIELDS = [
  ['callbackUrl', 'set the publicBaseUrl (or callbackUrl) module option, or pass callbackUrl'],
  ['returnUrl', 'set the returnUrl module option, or pass returnUrl'],
  ['cancellationUrl', 'set the cancellationUrl module option, or pass cancellationUrl'],
] as const;

/** The contract's request body, after every input check (all problems reported together). */
export function buildInitiateBody(
  input: CreateInvoiceInput,
  options: ResolvedCheckoutOptions,
): CheckoutInitiateRequestBody {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw new HubtelValidationError('createInvoice needs an object with totalAmount and description', [
      { field: '(input)', message: 'must be an object' },
    ]);
  const checked = compileValidator(CreateInvoiceDto)(input);
  const issues: ValidationIssue[] = checked.ok ? [] : checked.issues;
  const bad = (field: string, message: string, value?: unknown) =>
    issues.push({ field, message: `${field} ${message}`, ...(value === undefined ? {} : { value }) });
  const flagged = new Set(issues.map((issue) => issue.field));
  const ok = (field: string) => !flagged.has(field);

  const amount = input.totalAmount;
  if (ok('totalAmount')) {
    if (Math.abs(amount * 100 - Math.round(amount * 100)) > 1e-6)
      bad('totalAmount', 'must have at most 2 decimal places', amount);
    else if (!Number.isSafeInteger(Math.round(amount * 100))) bad('totalAmount', 'is too large', amount);
  }

  let description = '';
  if (ok('description')) {
    description = input.description.trim();
    const found = DESCRIPTION_FORBIDDEN_CHARACTERS.filter((c) => description.includes(c));
    if (found.length > 0) {
      const all = DESCRIPTION_FORBIDDEN_CHARACTERS.join(' ');
      if (options.descriptionSpecialCharacters === 'strip') {
        description = found
          .reduce((text, c) => text.replaceAll(c, ' '), description)
          .replace(/\s{2,}/g, ' ')
          .trim();
        if (description === '') bad('description', `is empty once the characters ${all} are removed`);
      } else
        bad(
          'description',
          `must not contain ${found.map((c) => `"${c}"`).join(', ')}: the platform fails payments (code 2001) whose description has ${all} (or set descriptionSpecialCharacters: 'strip')`,
        );
    }
  }

  const clientReference = input.clientReference ?? randomUUID().replace(/-/g, '');

  const [callbackUrl, returnUrl, cancellationUrl] = URL_FIELDS.map(([field, hint]) =>
    ok(field) ? urlOf(input[field], options[field], field, bad, hint) : undefined,
  );

  const body: Partial<CheckoutInitiateRequestBody> = {};
  const merchantAccountNumber = input.merchantAccountNumber ?? options.merchantAccountNumber;
  if (input.payeeName != null && ok('payeeName')) body.PayeeName = input.payeeName.trim();
  if (input.payeeMobileNumber != null) {
    const payee = tryNormalizeMsisdn(input.payeeMobileNumber, options.http.defaultCountryCode);
    if (payee.ok) body.PayeeMobileNumber = payee.msisdn;
    else issues.push({ field: 'payeeMobileNumber', message: payee.reason, value: input.payeeMobileNumber });
  }
  if (input.payeeEmail != null && ok('payeeEmail')) {
    if (!EMAIL.test(input.payeeEmail.trim()))
      bad('payeeEmail', 'must be an e-mail address', input.payeeEmail);
    else body.PayeeEmail = input.payeeEmail.trim();
  }
  if (input.metadata !== undefined) {
    let size: number;
    try {
      size =
        input.metadata !== null && typeof input.metadata === 'object' && !Array.isArray(input.metadata)
          ? Buffer.byteLength(JSON.stringify(input.metadata))
          : -1;
    } catch {
      size = -1; // a cycle or a BigInt: not JSON
    }
    if (size < 0) bad('metadata', 'must be a plain JSON object');
    else if (size > METADATA_MAX_BYTES)
      bad('metadata', `must be at most ${METADATA_MAX_BYTES} bytes as JSON (got ${size})`);
  }

  if (issues.length > 0) {
    const summary = issues
      .map((i) => (i.message.startsWith(i.field) ? i.message : `${i.field} ${i.message}`))
      .join('; ');
    throw new HubtelValidationError(`Invalid invoice: ${summary}`, issues);
  }
  return {
    // In cents and back: 0.1 + 0.2 is sent as 0.3, not 0.30000000000000004.
    totalAmount: Math.round(amount * 100) / 100,
    description,
    callbackUrl: callbackUrl!,
    returnUrl: returnUrl!,
    cancellationUrl: cancellationUrl!,
    clientReference: clientReference!,
    ...(merchantAccountNumber === undefined ? {} : { merchantAccountNumber }),
    ...body,
  };
}

/** A URL option: the given one, else the module's; an absolute http(s) URL without credentials. */
function urlOf(
  given: unknown,
  fallback: string | undefined,
  field: string,
  bad: (field: string, message: string, value?: unknown) => void,
  hint: string,
): string | undefined {
  const value = given ?? fallback;
  if (value === undefined) return void bad(field, `is required: ${hint}`);
  const url = typeof value === 'string' && URL.canParse(value) ? new URL(value) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    return void bad(field, 'must be an absolute http(s) URL', typeof value === 'string' ? value : undefined);
  if (url.username || url.password) return void bad(field, 'must not carry credentials');
  return value as string;
}

/** A clientReference given to getStatus() / reconcile(): checked before anything is asked. */
export function assertClientReference(
  clientReference: unknown,
  method: string,
): asserts clientReference is string {
  if (
    typeof clientReference !== 'string' ||
    clientReference === '' ||
    clientReference.length > CLIENT_REFERENCE_MAX_LENGTH
  ) {
    const message = `must be a non-empty string of at most ${CLIENT_REFERENCE_MAX_LENGTH} characters`;
    throw new HubtelValidationError(`${method}(): clientReference ${message}`, [
      { field: 'clientReference', message },
    ]);
  }
}
