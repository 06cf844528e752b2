import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { AbstractHttpAdapter } from '@nestjs/core';

export type AdapterName = 'express' | 'fastify';
export const ADAPTERS: AdapterName[] = ['express', 'fastify'];

export function createAdapter(name: AdapterName): AbstractHttpAdapter {
  return name === 'express' ? new ExpressAdapter() : new FastifyAdapter();
}
