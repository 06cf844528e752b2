import { Inject, Injectable, Module, type BeforeApplicationShutdown } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { hubtelConnectionModule } from './hubtel-connection.module.js';

const steps: string[] = [];

class Connection {
  constructor(readonly options: { name: string }) {}
  async connect(): Promise<void> {
    steps.push(`connect ${this.options.name}`);
  }
  async close(): Promise<void> {
    steps.push(`close ${this.options.name}`);
  }
}

const TOKEN = Symbol('CONNECTION');
const { ConfigurableModuleClass: ConnectionModule } = hubtelConnectionModule({
  moduleName: 'Connection',
  factoryMethod: 'createConnectionOptions',
  type: Connection,
  token: TOKEN,
  create: (options: { name: string }) => new Connection(options),
});

/** A module that still uses the connection while the app shuts down (as a pipeline drains). */
@Injectable()
class User implements BeforeApplicationShutdown {
  constructor(@Inject(TOKEN) readonly connection: Connection) {}
  beforeApplicationShutdown(): void {
    steps.push('drain');
  }
}
@Module({ providers: [User] })
class FeatureModule {}

describe('hubtelConnectionModule (HubtelRedisModule, HubtelBullmqModule)', () => {
  it('connects before start-up goes on, provides it globally under its token, and closes it last', async () => {
    steps.length = 0;
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConnectionModule.forRootAsync({ useFactory: async () => ({ name: 'redis' }) }),
        FeatureModule,
      ],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    expect(app.get(User).connection).toBe(app.get(Connection));
    expect(steps).toEqual(['connect redis']);
    await app.close();
    expect(steps).toEqual(['connect redis', 'drain', 'close redis']);
  });
});
