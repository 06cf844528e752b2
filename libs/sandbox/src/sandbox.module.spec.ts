import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HubtelSandbox } from './sandbox.server.js';
import { SandboxModule } from './sandbox.module.js';

@Injectable()
class UsesSandbox {
  constructor(@Inject(HubtelSandbox) readonly sandbox: HubtelSandbox) {}
}

@Module({ providers: [UsesSandbox], exports: [UsesSandbox] })
class ConsumerModule {}

const CONFIG = 'SANDBOX_CONFIG';

describe('SandboxModule', () => {
  it('starts the sandbox during bootstrap, provides it, and stops it on shutdown', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SandboxModule.forRoot({ posSalesId: '42' })],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const sandbox = app.get(HubtelSandbox);
    expect(sandbox.posSalesId).toBe('42');
    const res = await fetch(`${sandbox.url}/_sandbox/stats`);
    expect(res.status).toBe(200);
    await app.close();
    await expect(fetch(`${sandbox.url}/_sandbox/stats`)).rejects.toThrow();
  });

  it('forRootAsync + isGlobal: options from a factory, the sandbox injectable anywhere', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        SandboxModule.forRootAsync({
          isGlobal: true,
          useFactory: () => ({ credentials: { sms: { clientId: 'from-factory', clientSecret: 's' } } }),
        }),
        ConsumerModule,
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const { sandbox } = app.get(UsesSandbox);
      expect(sandbox.credentials.sms.clientId).toBe('from-factory');
      expect(sandbox.baseUrls().sms).toBe(sandbox.url);
    } finally {
      await app.close();
    }
  });

  it('lets another provider read the URLs and credentials in its async factory', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SandboxModule.forRoot({ isGlobal: true })],
      providers: [
        {
          provide: CONFIG,
          inject: [HubtelSandbox],
          useFactory: (sandbox: HubtelSandbox) => ({
            baseUrl: sandbox.baseUrls().checkout,
            ...sandbox.credentials.api,
          }),
        },
      ],
    }).compile();
    const config = moduleRef.get<{ baseUrl: string; clientId: string }>(CONFIG);
    expect(config.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(config.clientId).toBe('sandbox-api');
    await moduleRef.close();
  });
});
