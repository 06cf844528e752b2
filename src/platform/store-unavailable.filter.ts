import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { HubtelLogger, HubtelStoreUnavailableError } from 'nestjs-hubtel';

/**
 * The app's own pages and JSON (shop, order pages, simulator) while the store (Redis) is down or
 * slow: a 503 saying to try again, not Nest's 500. The modules' inbound endpoints answer their own
 * documented 503 and never get here.
 */
@Catch(HubtelStoreUnavailableError)
export class StoreUnavailableFilter implements ExceptionFilter {
  private readonly logger = new HubtelLogger('Store');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: HubtelStoreUnavailableError, host: ArgumentsHost): void {
    this.logger.warn(`Store unavailable: ${error.message}`);
    const http = this.adapterHost.httpAdapter;
    const res = host.switchToHttp().getResponse<unknown>();
    http.setHeader(res, 'Retry-After', '5');
    http.setHeader(res, 'Cache-Control', 'no-store');
    http.reply(
      res,
      {
        statusCode: HttpStatus.SERVICE_UNAVAILABLE,
        code: 'STORE_UNAVAILABLE',
        message: 'The shop cannot reach its records right now. Please try again in a moment.',
      },
      HttpStatus.SERVICE_UNAVAILABLE,
    );
  }
}
