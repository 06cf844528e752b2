import { EventEmitter } from 'node:events';
import type { INestApplication } from '@nestjs/common';
import { LatencyProbe, PROBE_HEADER } from './latency-probe.js';

/** A stand-in for the HTTP server: the probe only listens to its `request` event. */
function probeOn(): { probe: LatencyProbe; arrive: (key: string) => void } {
  const server = new EventEmitter();
  const probe = new LatencyProbe();
  probe.attach({ getHttpServer: () => server } as unknown as INestApplication);
  return { probe, arrive: (key) => server.emit('request', { headers: { [PROBE_HEADER]: key } }) };
}

describe('LatencyProbe', () => {
  it('ignores a warm-up request whose handler starts after the measured run began', () => {
    const { probe, arrive } = probeOn();
    // Warm-up: arrived while not recording, handled once recording started (a loaded machine).
    arrive('warm-1');
    probe.start();
    probe.handled('warm-1', 'checkout-callback');
    arrive('k-1');
    probe.handled('k-1', 'checkout-callback');
    expect(probe.stop()).toMatchObject({ count: 1, twice: 0, pending: 0 });
  });

  it('counts a measured request handled twice, and one never handled', () => {
    const { probe, arrive } = probeOn();
    probe.start();
    arrive('k-1');
    arrive('k-2');
    probe.handled('k-1', 'fulfillment');
    probe.handled('k-1', 'fulfillment');
    expect(probe.stop()).toMatchObject({ count: 1, twice: 1, pending: 1 });
  });
});
