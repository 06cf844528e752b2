import { ConfigurableModuleBuilder, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { HubtelLogger } from 'nestjs-hubtel';
import { HubtelSandbox } from './sandbox.server.js';
import type { HubtelSandboxOptions } from './sandbox.option-types.js';

/** SandboxModule options: those of `HubtelSandbox` (port 0 = a free port). */
export type SandboxModuleOptions = HubtelSandboxOptions;

const { ConfigurableModuleClass: SandboxConfigurableModule, MODULE_OPTIONS_TOKEN: SANDBOX_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<SandboxModuleOptions>({ moduleName: 'HubtelSandbox' })
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();

/**
 * Runs the sandbox inside a Nest application, on its own port: it starts while the application
 * bootstraps (so other modules' async factories can inject `HubtelSandbox` and read its URLs and
 * credentials) and stops on application shutdown.
 *
 * ```ts
 * SandboxModule.forRoot({ port: 4010, isGlobal: true }),
 * SmsModule.forRootAsync({
 *   inject: [HubtelSandbox],
 *   useFactory: (sandbox: HubtelSandbox) => ({ baseUrl: sandbox.baseUrls().sms, ...sandbox.credentials.sms }),
 * }),
 * ```
 */
@Module({
  providers: [
    {
      provide: HubtelSandbox,
      inject: [SANDBOX_MODULE_OPTIONS],
      useFactory: (options: SandboxModuleOptions) =>
        HubtelSandbox.start({ logger: new HubtelLogger('HubtelSandbox'), ...options }),
    },
  ],
  exports: [HubtelSandbox],
})
export class SandboxModule extends SandboxConfigurableModule implements OnApplicationShutdown {
  constructor(@Inject(HubtelSandbox) private readonly sandbox: HubtelSandbox) {
    super();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sandbox.stop();
  }
}
