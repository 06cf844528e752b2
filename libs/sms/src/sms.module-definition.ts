import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { SmsModuleOptions } from './sms.options.js';

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
