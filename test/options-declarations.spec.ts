import { optionFields } from '#internal';
import {
  CheckoutModuleOptions,
  type CheckoutModuleWideOption,
} from '../libs/checkout/src/checkout.options.js';
import {
  ServiceAppModuleOptions,
  ServiceAppModuleWideOptions,
} from '../libs/service-app/src/service-app.options.js';
import { SmsModuleOptions, type SmsAccountOverrides } from '../libs/sms/src/sms.options.js';

/*
 * A type cannot read decorators: the account-override types name the module-wide options by hand.
 * Each list below must have exactly the keys of its type (the compiler checks a Record's keys), and
 * here exactly the options the class declares `defaultOnly`, so the type and the declaration agree.
 */
const checkoutWide: Record<CheckoutModuleWideOption, true> = {
  store: true,
  handlers: true,
  reconciliation: true,
  invoiceTtlMs: true,
  maxCallbackBodyBytes: true,
  statusCheckBudget: true,
  accounts: true,
};
/** The service app's account-override type leaves out the fields of its module-wide base class. */
const serviceAppWide = Object.fromEntries(
  optionFields(ServiceAppModuleWideOptions).map((field) => [field.key, true]),
);
/** SMS: every option but the resolver is an account's own or inherited. */
const smsWide: Record<Exclude<keyof SmsModuleOptions, keyof SmsAccountOverrides>, true> = { accounts: true };

const defaultOnly = (options: Function) =>
  optionFields(options)
    .filter((field) => field.spec.account === 'defaultOnly')
    .map((field) => field.key)
    .sort();

describe.each([
  ['CheckoutModuleOptions', CheckoutModuleOptions, checkoutWide],
  ['ServiceAppModuleOptions', ServiceAppModuleOptions, serviceAppWide],
  ['SmsModuleOptions', SmsModuleOptions, smsWide],
])('%s', (_name, options, wide) => {
  it('its account-override type leaves out exactly the options it declares defaultOnly', () => {
    expect(defaultOnly(options)).toEqual(Object.keys(wide).sort());
  });
});
