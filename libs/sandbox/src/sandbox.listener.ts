import http, { type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HubtelConfigError } from '#light/core';

/** Listens on `host:port`; a port in use or a host it cannot bind is a HubtelConfigError. */
export function listenHttp(host: string, port: number, handler: RequestListener): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    const server = http.createServer(handler);
    server.keepAliveTimeout = 5_000;
    const onError = (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new HubtelConfigError('port', `${port} is already in use on ${host}`)
          : new HubtelConfigError('host', `cannot listen on ${host}:${port}: ${err.message}`),
      );
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(server);
    });
  });
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
