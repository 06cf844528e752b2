import { once } from 'node:events';
import http, { type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HubtelConfigError } from '#light/core';

/** Listens on `host:port`; a port in use or a host it cannot bind is a HubtelConfigError. */
export async function listenHttp(host: string, port: number, handler: RequestListener): Promise<Server> {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 5_000;
  try {
    await once(server.listen(port, host), 'listening');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw err.code === 'EADDRINUSE'
      ? new HubtelConfigError('port', `${port} is already in use on ${host}`)
      : new HubtelConfigError('host', `cannot listen on ${host}:${port}: ${err.message}`);
  }
  return server;
}

/** The origin a client reaches the server at (a wildcard host is reached on loopback). */
export function serverOrigin(server: Server, host: string): string {
  const { port } = server.address() as AddressInfo;
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  else if (host === '::') host = '::1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Closes the server and every open connection (a request hung by a `timeout` fault, say). */
export function closeHttp(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
