import {
  ConfigurableModuleBuilder,
  type DynamicModule,
  type InjectionToken,
  type OnApplicationShutdown,
  type Type,
} from '@nestjs/common';

/** What a connection module opens: it connects at start-up and closes at shutdown (when it has them). */
export interface HubtelConnection {
  connect?(): Promise<void>;
  close?(): Promise<void>;
}

/** Extras of a connection module's `forRoot`/`forRootAsync`. */
export interface HubtelConnectionExtras {
  /** Provide the connection's token to every module of the app. Default true. */
  isGlobal?: boolean;
}

/**
 * HubtelRedisModule's, HubtelBullmqModule's and HubtelMetricsModule's forRoot(Async): `type` connected
 * before start-up goes on, also under `token`; closed last, as the pipelines use it while they drain.
 */
export function hubtelConnectionModule<O, T extends object, F extends string>(spec: {
  moduleName: string;
  factoryMethod: F;
  type: Type<T>;
  token: InjectionToken;
  create: (options: O) => T;
}) {
  const built = new ConfigurableModuleBuilder<O>({ moduleName: spec.moduleName })
    .setClassMethodName('forRoot')
    .setFactoryMethodName(spec.factoryMethod)
    .setExtras<HubtelConnectionExtras>({ isGlobal: true }, (definition, extras): DynamicModule => ({
      ...definition,
      global: extras.isGlobal,
      providers: [
        ...(definition.providers ?? []),
        {
          provide: spec.type,
          useFactory: async (options: O) => {
            const connection: HubtelConnection = spec.create(options);
            await connection.connect?.();
            return connection;
          },
          inject: [built.MODULE_OPTIONS_TOKEN],
        },
        { provide: spec.token, useExisting: spec.type },
        {
          provide: Symbol(`${spec.moduleName}:close`),
          useFactory: (connection: HubtelConnection): OnApplicationShutdown => ({
            onApplicationShutdown: () => connection.close?.(),
          }),
          inject: [spec.type],
        },
      ],
      exports: [spec.token, spec.type],
    }))
    .build();
  return built;
}
