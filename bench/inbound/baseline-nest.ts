import {
  Body,
  Controller,
  HttpCode,
  Module,
  Post,
  ValidationPipe,
  type INestApplication,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CheckoutCallbackDto, FulfillmentRequestDto, ServiceFlowRequestDto } from './baseline-dtos.js';
import { serviceFlowReply } from '../lib/shapes.js';
import { createAdapter, type AdapterName } from './adapters.js';

/**
 * Baselines (b) and (c): what a user would write by hand. The same controller serves both; (c)
 * adds Nest's global ValidationPipe, so the DTO classes in the signatures are validated.
 * Handlers do what a minimal real handler does: read the key and answer.
 */
@Controller()
class PlainController {
  @Post('hubtel/checkout/callback')
  @HttpCode(200)
  checkout(@Body() body: CheckoutCallbackDto): { received: boolean; key: string } {
    return { received: true, key: body.Data.CheckoutId };
  }

  @Post('api/service-flow')
  @HttpCode(200)
  serviceFlow(@Body() body: ServiceFlowRequestDto): Record<string, unknown> {
    return serviceFlowReply(body.SessionId);
  }

  @Post('api/fulfillment')
  @HttpCode(200)
  fulfillment(@Body() body: FulfillmentRequestDto): { received: boolean; key: string } {
    return { received: true, key: body.OrderId };
  }
}

@Module({ controllers: [PlainController] })
class PlainAppModule {}

export async function createBaselineApp(adapter: AdapterName, validated: boolean): Promise<INestApplication> {
  const app = await NestFactory.create(PlainAppModule, createAdapter(adapter), { logger: ['error', 'warn'] });
  // The default options: what the Nest documentation shows and most apps use.
  if (validated) app.useGlobalPipes(new ValidationPipe());
  return app;
}
