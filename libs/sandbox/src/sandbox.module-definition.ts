import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { HubtelSandboxOptions } from './sandbox.option-types.js';

/** SandboxModule options: those of `HubtelSandbox` (port 0 = a free port). */
export type SandboxModuleOptions = HubtelSandboxOptions;

export const {
  ConfigurableModuleClass: SandboxConfigurableModule,
  MODULE_OPTIONS_TOKEN: SANDBOX_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<SandboxModuleOptions>({ moduleName: 'HubtelSandbox' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
