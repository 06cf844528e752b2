// Placeholder entry for the example merchant app (to be replaced by the real app): boots an empty
// Nest app so `npm start` works end to end. It imports the library like a user would.
import 'reflect-metadata';
import { Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MemoryStore } from 'nestjs-hubtel';

@Module({ providers: [{ provide: MemoryStore, useValue: new MemoryStore() }] })
class AppModule {}

const app = await NestFactory.create(AppModule);
await app.listen(Number(process.env.PORT ?? 3000));
new Logger('Example').log(`Example app listening on ${await app.getUrl()}`);
