import { Controller, Get, Header, Module, type DynamicModule } from '@nestjs/common';
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
 * Health and metrics of the example app. Each app gets its own prom-client registry (a real app
 * may as well use the global one: leave `registry` out, and add `collectDefaultMetrics()`).
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
      controllers: [HealthController, MetricsController],
    };
  }
}
