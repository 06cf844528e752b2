import type { INestApplication } from '@nestjs/common';
import type { Message } from '../lib/ipc.js';
import type { AdapterName } from './adapters.js';

export interface ModuleApp {
  app: INestApplication;
  handlers?: Record<string, (message: Message) => Record<string, unknown> | void>;
}

/** (d) The suite's endpoints — filled in once libs/checkout and libs/service-app have landed. */
export async function createModuleApp(adapter: AdapterName): Promise<ModuleApp> {
  throw new Error(`the suite's inbound modules have not landed yet (${adapter})`);
}
