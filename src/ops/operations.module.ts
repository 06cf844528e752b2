import {
  Controller,
  Get,
  Header,
  Module,
  type DynamicModule,
  type INestApplicationContext,
} from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule, type HealthCheckResult } from '@nestjs/terminus';
import { prometheusContentType, Registry } from 'prom-client';
import { HubtelHealthIndicator, HubtelHealthModule } from 'nestjs-hubtel/health';
import { HubtelMetrics, HubtelMetricsModule } from 'nestjs-hubtel/metrics';

/**
 * `GET /health`: terminus, with the suite's store and job runner (Redis and BullMQ with
 * REDIS_URL, in memory and in process otherwise): 200 when up, 503 with what is down.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly hubtel: HubtelHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check(): Promise<HealthCheckResult> {
    return this.health.check(this.hubtel.checks());
  }
}

/** `GET /metrics`: the suite's Prometheus metrics (callbacks, handlers, SMS, platform calls, ...). */
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: HubtelMetrics) {}

  @Get()
  @Header('Content-Type', prometheusContentType)
  scrape(): Promise<string> {
    return this.metrics.metrics();
  }
}

/**
 * Health and metrics of the example app: the indicator and the recorder live in the shop's app
 * (they watch its store, runner and modules). Each app gets its own prom-client registry (a real
 * app may as well use the global one: leave `registry` out, and add `collectDefaultMetrics()`).
 * No routes here: they are served on the operations port (OperationsHttpModule).
 */
@Module({})
export class OperationsModule {
  static forRoot(): DynamicModule {
    return {
      module: OperationsModule,
      imports: [
        TerminusModule,
        HubtelHealthModule.forRoot(),
        HubtelMetricsModule.forRoot({ registry: new Registry() }),
      ],
    };
  }

  /** The same, with `/health` and `/metrics` served by the app itself (one port: tests, tools). */
  static withRoutes(): DynamicModule {
    return { ...OperationsModule.forRoot(), controllers: [HealthController, MetricsController] };
  }
}

/**
 * The operations port's own small Nest app: `/health` and `/metrics` of the shop's app, and
 * nothing else. Apart from the shop so that only probes and scrapers reach them (what the store
 * is, what fails, how much is sold are nobody else's business), as production apps do.
 */
@Module({})
export class OperationsHttpModule {
  static forRoot(shop: INestApplicationContext): DynamicModule {
    return {
      module: OperationsHttpModule,
      imports: [TerminusModule],
      controllers: [HealthController, MetricsController],
      providers: [
        { provide: HubtelHealthIndicator, useValue: shop.get(HubtelHealthIndicator) },
        { provide: HubtelMetrics, useValue: shop.get(HubtelMetrics) },
      ],
    };
  }
}
