// `node --import ./bench/loader/register.mjs file.ts` runs the repo's TypeScript sources directly:
// the benchmark needs no build step, works from a clean clone after `npm ci`, and always measures
// the code in the working tree. SWC strips types and emits legacy decorators with their metadata,
// exactly as the Jest transform does (jest.config.js).
import 'reflect-metadata';
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
