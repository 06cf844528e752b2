import { ConfigurableModuleBuilder, type FactoryProvider, type ModuleMetadata } from '@nestjs/common';
import type { SmsAccountOverrides, SmsModuleOptions } from './sms.options.js';

export interface SmsModuleExtras {
  /** Register SmsService globally (no need to import SmsModule in every feature module). */
  isGlobal?: boolean;
}

export const {
  ConfigurableModuleClass: SmsConfigurableModule,
  MODULE_OPTIONS_TOKEN: SMS_MODULE_OPTIONS,
  OPTIONS_TYPE: SMS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: SMS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<SmsModuleOptions>({ moduleName: 'HubtelSms' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createSmsOptions')
  .setExtras<SmsModuleExtras>({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

/** `SmsModule.forRoot(...)` argument. */
export type SmsModuleForRootOptions = typeof SMS_OPTIONS_TYPE;
/** `SmsModule.forRootAsync(...)` argument (useFactory / useClass / useExisting, imports, inject). */
export type SmsModuleAsyncOptions = typeof SMS_ASYNC_OPTIONS_TYPE;

/** `SmsModule.registerAccount(...)` argument: the account's name, its options, and module extras. */
export type SmsAccountOptions = SmsAccountOverrides & {
  /** The account's name (`north`): lower-case letters, digits, `-`, `_`; not `default`. */
  name: string;
  /** Make `@InjectSms(name)` work in every module, not only those importing this registration. */
  isGlobal?: boolean;
};

/** `SmsModule.registerAccountAsync(...)` argument. */
export interface SmsAccountAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  name: string;
  isGlobal?: boolean;
  inject?: FactoryProvider['inject'];
  /** The account's options (as `registerAccount` takes them, without `name`). */
  useFactory: (...args: never[]) => SmsAccountOverrides | Promise<SmsAccountOverrides>;
}
